#include "top/metrics_fetch.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace sluice::top {
namespace {

using Clock = std::chrono::steady_clock;

// An agent's /metrics is tens of KiB (a few MiB with thousands of connections' sources): more is
// not an agent, and top's memory stays bounded.
constexpr size_t kMaxResponseBytes = size_t{64} << 20;

struct Target {
  std::string host, port, path = "/metrics";
};

Target parse_address(std::string address) {
  if (address.rfind("http://", 0) == 0) address.erase(0, 7);
  Target t;
  if (const size_t slash = address.find('/'); slash != std::string::npos) {
    t.path = address.substr(slash);
    address.erase(slash);
  }
  size_t colon = address.rfind(':');
  if (!address.empty() && address.front() == '[') {  // [v6]:port
    const size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':')
      throw std::runtime_error("'" + address + "' is not [address]:port");
    t.host = address.substr(1, close - 1);
    colon = close + 1;
  } else {
    if (colon == std::string::npos) throw std::runtime_error("'" + address + "' is not host:port");
    t.host = address.substr(0, colon);
  }
  t.port = address.substr(colon + 1);
  if (t.host.empty() || t.port.empty()) throw std::runtime_error("'" + address + "' is not host:port");
  return t;
}

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Waits for `events` on fd until the deadline; false on timeout.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  while (true) {
    const int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

std::string fetch_metrics(const std::string& address, std::chrono::milliseconds timeout) {
  const Target t = parse_address(address);
  const Clock::time_point deadline = Clock::now() + timeout;
  const std::string host = t.host.find(':') != std::string::npos ? "[" + t.host + "]" : t.host;  // IPv6
  const std::string where = "http://" + host + ":" + t.port + t.path;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(t.host.c_str(), t.port.c_str(), &hints, &found); rc != 0)
    throw std::runtime_error("cannot resolve " + t.host + ": " + gai_strerror(rc));
  std::string failure = "no address";
  std::string response;
  for (const addrinfo* a = found; a; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (s.fd() < 0) continue;
    if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      failure = std::strerror(errno);
      continue;
    }
    if (!wait_for(s.fd(), POLLOUT, deadline)) {
      failure = "connect timed out";
      continue;
    }
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error) {
      failure = std::strerror(error);
      continue;
    }
    const std::string request =
        "GET " + t.path + " HTTP/1.0\r\nHost: " + host + ":" + t.port + "\r\nConnection: close\r\n\r\n";
    size_t written = 0;
    while (written < request.size()) {
      const ssize_t n = ::send(s.fd(), request.data() + written, request.size() - written, MSG_NOSIGNAL);
      if (n > 0) {
        written += static_cast<size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!wait_for(s.fd(), POLLOUT, deadline)) break;
      } else {
        break;
      }
    }
    // From here on this address answered: what goes wrong is its failure, not the next address's.
    if (written < request.size()) {
      failure = "the request could not be sent";
      break;
    }
    char buffer[65536];
    bool closed = false;
    int read_error = 0;
    while (!closed) {
      const ssize_t n = ::recv(s.fd(), buffer, sizeof buffer, 0);
      if (n > 0) {
        response.append(buffer, static_cast<size_t>(n));
        if (response.size() > kMaxResponseBytes) break;
      } else if (n == 0) {
        closed = true;
      } else if (errno == EAGAIN || errno == EINTR) {
        if (!wait_for(s.fd(), POLLIN, deadline)) break;
      } else {
        read_error = errno;
        break;
      }
    }
    if (read_error) {
      failure = std::strerror(read_error);
      break;
    }
    if (response.size() > kMaxResponseBytes) {
      failure = "the answer is over " + std::to_string(kMaxResponseBytes >> 20) + " MiB (not an agent's metrics?)";
      break;
    }
    if (!closed) {
      failure = "no complete answer within " + std::to_string(timeout.count()) + " ms";
      break;
    }
    failure.clear();
    break;
  }
  ::freeaddrinfo(found);
  if (!failure.empty()) throw std::runtime_error("cannot read " + where + ": " + failure);
  const size_t header_end = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || header_end == std::string::npos)
    throw std::runtime_error(where + " did not answer in HTTP");
  const std::string status_line = response.substr(0, std::min(response.find('\r'), size_t{200}));
  if (status_line.size() < 12 || status_line.compare(9, 3, "200") != 0)
    throw std::runtime_error(where + " answered " + (status_line.size() > 9 ? status_line.substr(9) : status_line));
  return response.substr(header_end + 4);
}

}  // namespace sluice::top
