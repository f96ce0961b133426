#include "loadgen/receiver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace sluice::loadgen {

CountingReceiver::CountingReceiver(uint16_t port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 1024) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd_);
    throw std::runtime_error("receiver: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

CountingReceiver::~CountingReceiver() { stop(); }

void CountingReceiver::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  thread_.join();
  ::close(listen_fd_);
}

void CountingReceiver::serve() {
  std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
  std::vector<char> buffer(1 << 20);
  while (!stopping_.load()) {
    if (drop_.exchange(false)) {
      for (size_t i = 1; i < fds.size(); ++i) ::close(fds[i].fd);
      fds.resize(1);
    }
    if (half_close_.exchange(false))
      for (size_t i = 1; i < fds.size(); ++i) ::shutdown(fds[i].fd, SHUT_WR);
    if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      for (int fd; (fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
        fds.push_back({fd, POLLIN, 0});
        accepted_.fetch_add(1);
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (n > 0) {
        bytes_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
        events_.fetch_add(static_cast<uint64_t>(std::count(buffer.data(), buffer.data() + n, '\n')),
                          std::memory_order_relaxed);
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
    std::erase_if(fds, [](const pollfd& p) { return p.fd < 0; });
  }
  for (size_t i = 1; i < fds.size(); ++i) ::close(fds[i].fd);
}

}  // namespace sluice::loadgen
