#include "agent/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace sluice {

bool notify_systemd(const std::string& message) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (!path || !*path) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t length = std::strlen(path);
  if (length >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path, length);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool sent = ::sendto(fd, message.data(), message.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr),
                             static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length)) >= 0;
  ::close(fd);
  return sent;
}

std::chrono::milliseconds systemd_watchdog_interval() {
  const char* usec = std::getenv("WATCHDOG_USEC");
  if (!usec) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(std::strtoll(usec, nullptr, 10) / 1000);
}

}  // namespace sluice
