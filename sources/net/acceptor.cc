#include "sources/net/acceptor.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>

#include <spdlog/spdlog.h>

namespace sluice::net {
namespace {

// At shutdown the listeners' backlogs are accepted (and drained like the others) before the
// listeners close: the kernel completed those handshakes, so their senders think them open.
constexpr int kBacklogAcceptMax = 100000;
// Accepts per wake-up, so that one busy port cannot starve the loop's connections.
constexpr int kAcceptBurst = 256;

// Resolves host:port into a socket address; throws ConfigError.
sockaddr_storage resolve(const config::ComponentConfig& component, const std::string& host, uint16_t port) {
  sockaddr_storage addr{};
  if (uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&addr)) == 0) return addr;
  if (uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&addr)) == 0) return addr;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found) {
    component.fail("host", std::string("cannot resolve \"") + host + "\": " + gai_strerror(rc));
  }
  std::memcpy(&addr, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  if (addr.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&addr)->sin_port = htons(port);
  else
    reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = htons(port);
  return addr;
}

void apply_receive_buffer(int fd, uint64_t bytes) {
  const int wanted = static_cast<int>(bytes);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &wanted, sizeof wanted);
  int got = 0;
  socklen_t len = sizeof got;
  ::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len);
  static std::once_flag warned;
  // Linux reports twice the usable size it granted; less than asked means rmem_max capped it.
  if (got / 2 < wanted)
    std::call_once(warned, [&] {
      spdlog::warn(
          "readBufferSize {} was capped by the kernel to {} bytes: raise "
          "net.core.rmem_max (see sysctl/)",
          wanted, got / 2);
    });
}

}  // namespace

Acceptor::Acceptor(uv_loop_t* loop, const StreamSettings& config, StreamProbe& probe, IoCounters& counters,
                   std::atomic<int64_t>& open_connections, Deal deal, ListenerPool* pool)
    : loop_(loop),
      pool_(pool),
      config_(config),
      probe_(probe),
      counters_(counters),
      open_connections_(open_connections),
      deal_(std::move(deal)) {}

int open_listening_socket(const config::ComponentConfig& component, const StreamSettings& config, uint16_t port,
                          int* error) {
  sockaddr_storage addr = resolve(component, config.host, port);
  const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw config::ConfigError(std::string("socket(): ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // Set before listen(): accepted sockets inherit it, and the window scale is negotiated in
  // the SYN, so a larger buffer set later would not widen the window.
  if (config.read_buffer_size.bytes) apply_receive_buffer(fd, config.read_buffer_size.bytes);
  const socklen_t len = addr.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, static_cast<int>(config.backlog)) != 0) {
    const int err = errno;
    ::close(fd);
    if (error) {
      *error = err;
      return -1;
    }
    const std::string why = "cannot listen on " + config.host + ":" + std::to_string(port) + ": " + std::strerror(err) +
                            (err == EADDRINUSE ? " (another process has this port)" : "");
    component.fail("ports", why);
  }
  return fd;
}

uint16_t Acceptor::listen_on(const config::ComponentConfig& component, uint16_t port, size_t index) {
  const std::string key = ListenerPool::key(component.name, config_.host, port, index);
  // Handed over by the source a reload replaced (or bound for this one before anything stopped).
  int fd = pool_ ? pool_->adopt(key) : -1;
  if (fd < 0) fd = open_listening_socket(component, config_, port, nullptr);
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  const uint16_t actual = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                                           : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  auto listener = std::make_unique<Listener>();
  listener->fd = fd;
  listener->port = actual;
  listener->key = key;
  listener->acceptor = this;
  uv_poll_init(loop_, &listener->poll, fd);
  listener->poll.data = listener.get();
  uv_poll_start(&listener->poll, UV_READABLE, &Acceptor::on_acceptable);
  listeners_.push_back(std::move(listener));
  return actual;
}

void Acceptor::on_acceptable(uv_poll_t* handle, int status, int) {
  auto* listener = static_cast<Listener*>(handle->data);
  if (status >= 0) listener->acceptor->accept_from(*listener, kAcceptBurst);
}

bool Acceptor::accept_from(Listener& listener, int limit) {
  for (int i = 0; i < limit; ++i) {
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof peer;
    const int fd =
        ::accept4(listener.fd, reinterpret_cast<sockaddr*>(&peer), &peer_length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;  // before logging, which may change it
      if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return false;
      probe_.accept_failed(counters_, err);
      if (err == EMFILE || err == ENFILE) pause_accepting();
      return false;
    }
    counters_.accepted.add(1);
    if (admit(fd, peer)) deal_(fd, listener.port, peer);
  }
  return true;
}

void Acceptor::accept_backlog() {
  int budget = kBacklogAcceptMax;
  for (auto& l : listeners_) {
    if (handed_over(*l)) continue;  // its backlog is the successor's to accept
    while (budget > 0 && accept_from(*l, kAcceptBurst)) budget -= kAcceptBurst;
  }
}

bool Acceptor::handed_over(const Listener& listener) const { return pool_ && pool_->expects(listener.key); }

bool Acceptor::admit(int fd, const sockaddr_storage& peer) {
  std::optional<Refusal> refusal;
  // Behind a PROXY-protocol balancer the peer is the balancer, which must be one we trust; the
  // client is known (and filtered) once its header is read.
  const bool proxied = config_.proxy_protocol != ProxyProtocol::none;
  if (proxied && !config_.proxy_balancers.admits(peer))
    refusal = Refusal::proxy_untrusted;
  else if (!proxied && config_.clients.filters() && !config_.clients.admits(peer))
    refusal = Refusal::denied;
  else if (open_connections_.load(std::memory_order_relaxed) >= config_.max_connections)
    refusal = Refusal::limit;
  if (!refusal) {
    open_connections_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  ::close(fd);
  counters_.closed.add(1);
  probe_.refused(counters_, *refusal, address_text(peer));
  return false;
}

// Out of file descriptors: the listener would stay readable and spin; wait 100 ms.
void Acceptor::pause_accepting() {
  for (auto& l : listeners_) uv_poll_stop(&l->poll);
  if (!pause_timer_) {
    pause_timer_ = std::make_unique<uv_timer_t>();
    uv_timer_init(loop_, pause_timer_.get());
    pause_timer_->data = this;
  }
  uv_timer_start(
      pause_timer_.get(),
      [](uv_timer_t* t) {
        auto* self = static_cast<Acceptor*>(t->data);
        if (self->closed_) return;
        for (auto& l : self->listeners_) uv_poll_start(&l->poll, UV_READABLE, &Acceptor::on_acceptable);
      },
      100, 0);
}

void Acceptor::close() {
  if (closed_) return;
  closed_ = true;
  for (auto& l : listeners_) {
    uv_poll_stop(&l->poll);
    // Still listening, for the reload's successor to adopt; closed as at a shutdown otherwise.
    if (!pool_ || !pool_->park_if_expected(l->key, l->fd)) ::close(l->fd);
    uv_close(reinterpret_cast<uv_handle_t*>(&l->poll), nullptr);
  }
  if (pause_timer_) uv_close(reinterpret_cast<uv_handle_t*>(pause_timer_.get()), nullptr);
}

}  // namespace sluice::net
