#pragma once
// Writing to a test's socket.

#include <sys/socket.h>
#include <sys/types.h>

#include <string_view>

namespace sluice::test {

// Writes all of `bytes` to socket `fd`; false if the peer is gone (no SIGPIPE).
inline bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace sluice::test
