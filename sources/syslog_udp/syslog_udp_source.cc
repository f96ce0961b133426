#include "sources/syslog_udp/syslog_udp_source.h"

#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>

#include <spdlog/spdlog.h>
#include "sources/pipeline/event_maker.h"
#include "sources/syslog/syslog_format.h"

namespace sluice::syslog_udp {
namespace {

constexpr size_t kDatagramsPerRead = 64;
// recvmmsg calls per socket before the loop looks at its other sockets, the clock and the drops.
constexpr int kReadsPerTurn = 16;
// A sender's line end after a datagram of exactly eventSize is not a reason to cut it.
constexpr size_t kLineEndRoom = 2;
constexpr int kPollMs = 100;
// How often each socket's drop count is read. SO_MEMINFO rather than SO_RXQ_OVFL: the latter
// reports a drop only with a datagram queued after it, so drops at the end of a burst (or before
// a stop) would go unseen; SO_MEMINFO reads the socket's count at any time.
constexpr auto kDropCheckEvery = std::chrono::milliseconds(100);

std::unique_ptr<Source> make_syslog_udp_source(const config::ComponentConfig& component, std::vector<Channel*> channels,
                                               BuildContext& context) {
  SyslogUdpConfig c = parse_syslog_udp_config(component);
  for (Channel* channel : channels) batch_size_for(component, "batchSize", c.batch_size, *channel);
  return std::make_unique<SyslogUdpSource>(component, std::move(c), std::move(channels), context.interceptors,
                                           context.selector);
}

int io_threads_for(int64_t configured) {
  if (configured > 0) return static_cast<int>(configured);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency() / 2));
}

// The port a bound socket has.
uint16_t bound_port(int fd) {
  sockaddr_storage actual{};
  socklen_t actual_length = sizeof actual;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&actual), &actual_length);
  return ntohs(actual.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&actual)->sin_port
                                           : reinterpret_cast<sockaddr_in6*>(&actual)->sin6_port);
}

// A UDP socket on host:port, `shared` with the other io threads (SO_REUSEPORT); the port bound
// (0 resolved) in `bound`. Throws ConfigError; with `bind_error`, a port that cannot be bound is
// -1 and its errno there instead.
int open_socket(const config::ComponentConfig& component, const SyslogUdpConfig& c, uint16_t port, uint16_t& bound,
                bool shared, int* bind_error = nullptr) {
  sockaddr_storage addr{};
  socklen_t length = 0;
  if (auto* v4 = reinterpret_cast<sockaddr_in*>(&addr); inet_pton(AF_INET, c.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    length = sizeof(sockaddr_in);
  } else if (auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
             inet_pton(AF_INET6, c.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    length = sizeof(sockaddr_in6);
  } else {
    component.fail("host", "\"" + c.host + "\" is not an IPv4 or IPv6 address");
  }
  const int fd = ::socket(addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw config::ConfigError(std::string("socket(): ") + std::strerror(errno));
  const int one = 1;
  if (shared) ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (c.read_buffer_size.bytes) {
    const int wanted = static_cast<int>(c.read_buffer_size.bytes);
    // With CAP_NET_ADMIN (run as root) SO_RCVBUFFORCE grants the size past net.core.rmem_max, as
    // rsyslog's imudp does; otherwise the kernel caps SO_RCVBUF there.
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &wanted, sizeof wanted) != 0)
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &wanted, sizeof wanted);
    int got = 0;
    socklen_t got_length = sizeof got;
    ::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &got_length);
    static std::once_flag warned;
    if (got / 2 < wanted)  // Linux reports twice what it granted
      std::call_once(warned, [&] {
        spdlog::warn("readBufferSize {} was capped by the kernel to {} bytes: raise net.core.rmem_max (see sysctl/)",
                     wanted, got / 2);
      });
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), length) != 0) {
    const int err = errno;
    ::close(fd);
    if (bind_error) {
      *bind_error = err;
      return -1;
    }
    component.fail("ports", "cannot listen on " + c.host + " UDP port " + std::to_string(port) + ": " +
                                std::strerror(err) + (err == EADDRINUSE ? " (another process has this port)" : ""));
  }
  bound = bound_port(fd);
  return fd;
}

// Datagrams still queued on a socket, taken off it without their contents.
uint64_t count_queued(int fd) {
  uint64_t count = 0;
  char byte;
  while (::recv(fd, &byte, 1, MSG_DONTWAIT | MSG_TRUNC) >= 0) ++count;
  return count;
}

// What the kernel has dropped on the socket for want of buffer room, a running total
// (SK_MEMINFO_DROPS), or nullopt if it does not say.
std::optional<uint32_t> drops_so_far(int fd) {
  uint32_t meminfo[SK_MEMINFO_VARS] = {};
  socklen_t length = sizeof meminfo;
  if (::getsockopt(fd, SOL_SOCKET, SO_MEMINFO, meminfo, &length) != 0 || length <= SK_MEMINFO_DROPS * sizeof(uint32_t))
    return std::nullopt;
  return meminfo[SK_MEMINFO_DROPS];
}

// A socket about to close that no source read to the end: one a reload handed over to a new
// source that did not start, or one of a source that never ran. What it still queues, and what
// the kernel dropped since it was last counted, no source is left to count: logged as lost.
void log_unread_socket(const std::string& key, int fd, uint32_t drops_seen) {
  const uint64_t queued = count_queued(fd);
  const uint32_t dropped = drops_so_far(fd).value_or(drops_seen) - drops_seen;
  if (queued || dropped)
    spdlog::error(
        "UDP socket {} closes with {} datagrams queued and {} dropped by the kernel since last counted, which no "
        "source read (a reload's new source did not start): lost",
        key, queued, dropped);
}

}  // namespace

const ComponentSpec kSyslogUdpSourceSpec{
    .kind = config::Kind::source,
    .type = "syslogudp",
    .aliases = {"multiport_syslogudp", "org.apache.flume.source.SyslogUDPSource"},
    .doc =
        "Syslog over UDP on one or more ports: one datagram is one event (RFC 3164/5424 headers). UDP has no "
        "backpressure: what the kernel drops for want of buffer room is counted (the sockets' drop counts).",
    .describe = [] { return config::describe(kSyslogUdpProperties); },
    .make_source = &make_syslog_udp_source,
};

// One io thread: its socket on each port, its batch.
class SyslogUdpSource::IoThread {
 public:
  IoThread(SyslogUdpSource& source, int index, bool shared_ports)
      : source_(source),
        config_(source.config_),
        counters_(source.probe_.io(index)),
        shared_ports_(shared_ports),
        slot_(config_.event_size + kLineEndRoom),
        buffers_(kDatagramsPerRead * slot_),
        want_peers_(config_.clients.filters() || !config_.client_ip_header.empty() || source.budgets_),
        maker_(source.format_.make(), source.format_.kind(), source.interceptors_, config_.header_names,
               {source.name(),
                source.channels_,
                source.selector_,
                source.routes_,
                "an io thread is not reading its UDP sockets, whose buffers fill and then drop (counted as "
                "udp_kernel_drops)",
                kDropCheckEvery,
                {.before_try =
                     [this] {
                       if (Clock::now() >= next_drop_check_) count_drops();
                       return source_.stop_.get();
                     },
                 .dropped =
                     [this](const Channel& channel, size_t events) {
                       source_.probe_.dropped_at_shutdown(counters_, events, channel.name());
                     }}},
               config_.batch_size, config_.batch_size * 128) {
    wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_ < 0) throw config::ConfigError(std::string("eventfd(): ") + std::strerror(errno));
  }
  ~IoThread() {
    if (thread_.joinable()) thread_.join();
    // Open still: the thread never ran (the source did not start after these were bound or
    // adopted); finish() closes them otherwise.
    for (const Socket& socket : sockets_)
      if (socket.fd >= 0) log_unread_socket(socket.key, socket.fd, socket.drops_seen);
    close_sockets();
    ::close(wake_);
  }

  // Before the threads run: the socket `key` names, handed over by the source a reload replaced
  // (or bound for this one before anything stopped), else a new one. Returns the port bound.
  uint16_t listen_on(const config::ComponentConfig& component, uint16_t port, const std::string& key) {
    uint64_t drops_seen = 0;
    int fd = source_.pool_ ? source_.pool_->adopt(key, &drops_seen) : -1;
    uint16_t bound = 0;
    if (fd >= 0)
      bound = bound_port(fd);
    else
      fd = open_socket(component, config_, port, bound, shared_ports_);
    sockets_.push_back({fd, bound, static_cast<uint32_t>(drops_seen), key});
    return bound;
  }
  void run() {
    thread_ = std::thread([this] { loop(); });
  }
  void wake() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(wake_, &one, sizeof one);
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct Socket {
    int fd;  // -1 once closed (or handed over)
    uint16_t port;
    uint32_t drops_seen;  // the socket's drop count (SK_MEMINFO_DROPS, a total) when last read
    std::string key;      // in the listener pool (SyslogUdpSource::socket_key)
  };

  void loop() {
    std::vector<pollfd> fds;
    for (const Socket& s : sockets_) fds.push_back({s.fd, POLLIN, 0});
    fds.push_back({wake_, POLLIN, 0});
    while (!source_.stop_.is_set()) {
      const int ready = ::poll(fds.data(), fds.size(), kPollMs);
      if (source_.stop_.is_set()) break;
      for (size_t i = 0; i < sockets_.size(); ++i)
        if (ready > 0 && (fds[i].revents & POLLIN)) read_socket(i);
      flush();
      if (Clock::now() >= next_drop_check_) count_drops();
    }
    finish();
  }

  // At stop: a socket a reload's successor expects (listener_pool.h) is handed over as it is,
  // what it holds and its drop count with it. What the others hold is read and put, for at most
  // half the time left (the sinks need the rest); then what is still queued is counted as unread,
  // the drops a last time, and they close, so that the kernel stops queueing for a reader that is
  // gone.
  void finish() {
    std::vector<bool> handed(sockets_.size(), false);
    for (size_t i = 0; i < sockets_.size(); ++i) handed[i] = source_.pool_ && source_.pool_->expects(sockets_[i].key);
    const auto now = Clock::now();
    const Deadline deadline = source_.stop_.get();
    const auto until = deadline > now ? now + (deadline - now) / 2 : now;
    for (bool more = true; more && Clock::now() < until;) {
      more = false;
      for (size_t i = 0; i < sockets_.size(); ++i)
        if (!handed[i]) more |= read_socket(i);
    }
    flush();
    count_drops();
    uint64_t unread = 0;
    for (size_t i = 0; i < sockets_.size(); ++i) {
      Socket& s = sockets_[i];
      const auto tell_unread = [key = s.key](int fd, uint64_t drops_seen) {
        log_unread_socket(key, fd, static_cast<uint32_t>(drops_seen));
      };
      if (handed[i] && source_.pool_->park_if_expected(s.key, s.fd, s.drops_seen, tell_unread)) {
        s.fd = -1;
        continue;
      }
      unread += count_queued(s.fd);
    }
    if (unread) source_.probe_.unread_at_shutdown(counters_, unread);
    count_drops();  // those of a full buffer since the first look, up to the close
    close_sockets();
  }

  void close_sockets() {
    for (Socket& s : sockets_)
      if (s.fd >= 0) {
        ::close(s.fd);
        s.fd = -1;
      }
  }

  // What the kernel dropped on each socket since the last look.
  void count_drops() {
    next_drop_check_ = Clock::now() + kDropCheckEvery;
    for (size_t i = 0; i < sockets_.size(); ++i) {
      if (sockets_[i].fd < 0) continue;
      const std::optional<uint32_t> drops = drops_so_far(sockets_[i].fd);
      if (!drops) continue;
      const uint32_t total = *drops;
      if (const uint32_t dropped = total - sockets_[i].drops_seen) source_.probe_.kernel_dropped(counters_, i, dropped);
      sockets_[i].drops_seen = total;
    }
  }

  // Reads the socket for a turn (kReadsPerTurn calls); true if it may hold more.
  bool read_socket(size_t index) {
    const Socket& socket = sockets_[index];
    mmsghdr messages[kDatagramsPerRead];
    iovec vectors[kDatagramsPerRead];
    sockaddr_storage peers[kDatagramsPerRead];
    for (int turn = 0; turn < kReadsPerTurn; ++turn) {
      for (size_t j = 0; j < kDatagramsPerRead; ++j) {
        vectors[j] = {buffers_.data() + j * slot_, slot_};
        messages[j].msg_hdr = msghdr{};
        if (want_peers_) {  // the kernel's copy of each sender's address costs ~5% of a read
          messages[j].msg_hdr.msg_name = &peers[j];
          messages[j].msg_hdr.msg_namelen = sizeof peers[j];
        }
        messages[j].msg_hdr.msg_iov = &vectors[j];
        messages[j].msg_hdr.msg_iovlen = 1;
        messages[j].msg_len = 0;
      }
      // MSG_TRUNC: msg_len is the datagram's own length, even when it was longer than its slot.
      const int received = ::recvmmsg(socket.fd, messages, kDatagramsPerRead, MSG_DONTWAIT | MSG_TRUNC, nullptr);
      if (received < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) source_.probe_.read_failed(counters_, errno);
        return false;
      }
      maker_.begin_read();  // once per call: a put may have waited since the last
      if (source_.budgets_) now_ns_ = pipeline::monotonic_ns();
      for (int j = 0; j < received; ++j) take(index, messages[j], vectors[j], peers[j]);
      if (received < static_cast<int>(kDatagramsPerRead)) return false;
    }
    return true;
  }

  void take(size_t index, const mmsghdr& message, const iovec& vector, const sockaddr_storage& peer) {
    const Socket& socket = sockets_[index];
    UdpIoCounters::Port& port = counters_.per_port[index];
    port.bytes.add(message.msg_len);
    if (config_.clients.filters() && !config_.clients.admits(peer)) {
      source_.probe_.denied(counters_, index, address_text(peer));
      return;
    }
    if (source_.budgets_ && !source_.budgets_->of(peer, now_ns_)->admit(message.msg_len, now_ns_)) {
      source_.probe_.over_client_rate(counters_, address_text(peer));
      return;
    }
    std::string_view frame(static_cast<const char*>(vector.iov_base),
                           std::min<size_t>(message.msg_len, vector.iov_len));
    // Senders may end a datagram with a line end (or a NUL): not part of the message.
    if (message.msg_len <= vector.iov_len)
      while (!frame.empty() && (frame.back() == '\n' || frame.back() == '\r' || frame.back() == '\0'))
        frame.remove_suffix(1);
    if (frame.empty()) {
      port.blank_lines.add(1);
      return;
    }
    const bool truncated = frame.size() > config_.event_size;
    if (truncated) frame = frame.substr(0, config_.event_size);
    const std::string ip = config_.client_ip_header.empty() ? std::string() : address_text(peer);
    pipeline::MadeTally tally;
    const bool kept = maker_.make(frame, {.truncated = truncated}, {socket.port, index, ip, ip.size()}, tally);
    port.events.add(1);
    if (truncated) port.truncated.add(1);
    if (tally.invalid) port.invalid.add(tally.invalid);
    if (tally.invalid_utf8) port.invalid_utf8.add(tally.invalid_utf8);
    if (tally.filtered) counters_.filtered.add(tally.filtered);
    if (kept && maker_.full()) flush();
  }

  // Puts the batch into every channel, waiting for room until the stop deadline; meanwhile the
  // sockets' buffers fill and the kernel drops, which is counted and logged as it happens.
  void flush() { maker_.flush(); }

  SyslogUdpSource& source_;
  const SyslogUdpConfig& config_;
  UdpIoCounters& counters_;
  const bool shared_ports_;  // SO_REUSEPORT: one socket per io thread on every port
  const size_t slot_;        // bytes read per datagram: eventSize and room for a line end
  std::vector<Socket> sockets_;
  int wake_ = -1;
  std::vector<char> buffers_;  // kDatagramsPerRead slots
  const bool want_peers_;      // the senders' addresses: for allow/deny, clientIPHeader or a client's budget
  int64_t now_ns_ = 0;         // the last read's time, for the clients' budgets
  Clock::time_point next_drop_check_{};
  pipeline::EventMaker maker_;  // its events, their batch, and its put into the channels
  std::thread thread_;
};

SyslogUdpSource::SyslogUdpSource(config::ComponentConfig component, SyslogUdpConfig config,
                                 std::vector<Channel*> channels, std::shared_ptr<const InterceptorChain> interceptors,
                                 std::shared_ptr<const ChannelSelector> selector)
    : component_(std::move(component)),
      config_(std::move(config)),
      channels_(std::move(channels)),
      interceptors_(std::move(interceptors)),
      selector_(selector ? std::move(selector) : every_channel(channels_.size())),
      format_(config_.keep_fields, config_.event_size, std::vector<Charset>(config_.ports.size(), config_.charset)),
      io_threads_(io_threads_for(config_.num_processors)),
      probe_(component_.name, config_.ports.size(), io_threads_),
      budgets_(config_.client_rate.any() ? std::make_unique<pipeline::ClientBudgets>(config_.client_rate) : nullptr),
      routes_(component_.name, channels_, *selector_) {
  probe_.watch_budgets(budgets_.get());
}

SyslogUdpSource::~SyslogUdpSource() {
  if (started_) stop(Clock::now());
}

std::string SyslogUdpSource::socket_key(size_t port_index, int thread) const {
  return "udp/" + ListenerPool::key(component_.name, config_.host, config_.ports[port_index], port_index) + "/" +
         std::to_string(thread);
}

std::vector<std::string> SyslogUdpSource::listener_keys() const {
  std::vector<std::string> keys;
  for (size_t i = 0; i < config_.ports.size(); ++i)
    for (int t = 0; t < io_threads_; ++t) keys.push_back(socket_key(i, t));
  return keys;
}

// A port in use by another program refuses the reload before anything stops (a plain bind: see
// start()); the sockets of a port handed over whole or in part are the old source's until it
// stops, and the threads it did not have join them at start.
void SyslogUdpSource::reserve_listeners(const std::set<std::string>& handed_over, const std::set<uint16_t>& freed) {
  if (!pool_) return;
  for (size_t i = 0; i < config_.ports.size(); ++i) {
    bool any_handed = false;
    for (int t = 0; t < io_threads_; ++t) any_handed |= handed_over.count(socket_key(i, t)) > 0;
    if (any_handed) continue;
    const uint16_t port = config_.ports[i];
    uint16_t bound = 0;
    int error = 0;
    if (port != 0) {
      const int probe = open_socket(component_, config_, port, bound, false, &error);
      if (probe < 0 && error == EADDRINUSE && freed.count(port)) continue;           // a source that goes has it
      if (probe < 0) ::close(open_socket(component_, config_, port, bound, false));  // throws, naming the port
      ::close(probe);
    }
    for (int t = 0; t < io_threads_; ++t) {
      const int fd = open_socket(component_, config_, t == 0 ? port : bound, bound, true);
      const std::string key = socket_key(i, t);
      pool_->reserve(key, fd, [key](int reserved, uint64_t) { log_unread_socket(key, reserved, 0); });
    }
  }
}

void SyslogUdpSource::start() {
  // Every socket with SO_REUSEPORT, one per io thread and port, also with one thread: a reload's
  // successor with more threads joins the sockets it is handed.
  const bool shared = true;
  // A port shared with SO_REUSEPORT would also be shared, silently, with another process that
  // has it: first make sure nobody does (a plain bind), so that the conflict is an error. Not for
  // a port whose sockets were handed over or reserved at a reload: this agent holds it.
  for (size_t i = 0; i < config_.ports.size(); ++i) {
    bool held = false;
    for (int t = 0; t < io_threads_; ++t) held |= pool_ && pool_->holds(socket_key(i, t));
    if (config_.ports[i] == 0 || held) continue;
    uint16_t ignored = 0;
    ::close(open_socket(component_, config_, config_.ports[i], ignored, false));
  }
  for (int i = 0; i < io_threads_; ++i) threads_.push_back(std::make_unique<IoThread>(*this, i, shared));
  // The first thread resolves port 0; the others share the port it got.
  for (size_t i = 0; i < config_.ports.size(); ++i) {
    const uint16_t bound = threads_[0]->listen_on(component_, config_.ports[i], socket_key(i, 0));
    for (size_t t = 1; t < threads_.size(); ++t)
      threads_[t]->listen_on(component_, bound, socket_key(i, static_cast<int>(t)));
    bound_ports_.push_back(bound);
  }
  probe_.set_ports(bound_ports_);
  started_ = true;  // from here stop() ends whatever threads run
  for (auto& t : threads_) t->run();
  std::string ports;
  for (uint16_t p : bound_ports_) ports += (ports.empty() ? "" : " ") + std::to_string(p);
  spdlog::info("source {}: listening on {} UDP port(s) {} with {} io thread(s)", name(), config_.host, ports,
               io_threads_);
}

void SyslogUdpSource::stop(Deadline deadline) {
  if (!started_) return;
  started_ = false;
  stop_.set(deadline);
  for (auto& t : threads_) t->wake();
  for (auto& t : threads_) t->join();
}

uint64_t SyslogUdpSource::max_event_bytes() const {
  // The datagram, a body composed without some header fields (keepFields), the client's address.
  const bool composed = config_.keep_fields != 0 && config_.keep_fields != syslog::keep_all;
  return config_.event_size * (composed ? 2 : 1) + 46;
}

uint64_t SyslogUdpSource::memory_bound() const {
  // Each io thread: its recvmmsg slots and the batch it builds.
  const uint64_t per_thread =
      kDatagramsPerRead * (config_.event_size + kLineEndRoom) +
      memory::reservation_factor(selector_.get()) * config_.batch_size * (max_event_bytes() + sizeof(EventRecord));
  return memory::times(static_cast<uint64_t>(io_threads_), per_thread);
}

}  // namespace sluice::syslog_udp
