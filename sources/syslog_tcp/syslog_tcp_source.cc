#include "sources/syslog_tcp/syslog_tcp_source.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "agent/log_limiter.h"
#include "sources/syslog_tcp/event_decoder.h"
#include "sources/syslog_tcp/framer.h"

namespace sluice::syslog_tcp {
namespace {

constexpr size_t kReadChunk = 256 * 1024;
constexpr auto kPutSlice = std::chrono::milliseconds(500);
constexpr auto kBlockedLogEvery = std::chrono::seconds(10);
// At shutdown each open connection is half-closed (our FIN tells the sender we are going) and
// read until the sender closes its side, or has sent nothing for kDrainQuietMs with nothing
// left in the kernel's buffer, or half of the shutdown time left (at most kDrainGraceMaxMs)
// has passed.
constexpr int64_t kDrainGraceMaxMs = 10000;
constexpr uint64_t kDrainQuietMs = 200;
// At shutdown the listeners' backlogs are accepted (and drained like the others) before the
// listeners close: the kernel completed those handshakes, so their senders think them open.
constexpr int kBacklogAcceptMax = 100000;

std::unique_ptr<Source> make_syslog_tcp_source(const config::ComponentConfig& component,
                                               std::vector<Channel*> channels, BuildContext&) {
  SyslogTcpConfig c = parse_syslog_tcp_config(component);
  for (Channel* channel : channels) batch_size_for(component, "batchSize", c.batch_size, *channel);
  return std::make_unique<SyslogTcpSource>(component, std::move(c), std::move(channels));
}

struct Counter {
  std::atomic<uint64_t> value{0};
  void add(uint64_t n) { value.fetch_add(n, std::memory_order_relaxed); }
  uint64_t get() const { return value.load(std::memory_order_relaxed); }
};

// The event counters of one port, written by one io thread, read by any.
struct PortCounterSet {
  Counter events, bytes, invalid, truncated, cut, blank_lines, octet_counted, invalid_utf8;
  void add_to(PortCounters& c) const {
    c.events += events.get();
    c.bytes += bytes.get();
    c.invalid += invalid.get();
    c.truncated += truncated.get();
    c.cut += cut.get();
    c.blank_lines += blank_lines.get();
    c.octet_counted += octet_counted.get();
    c.invalid_utf8 += invalid_utf8.get();
  }
};

std::string address_text(const sockaddr_storage& peer) {
  char address[INET6_ADDRSTRLEN] = "?";
  if (peer.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, address, sizeof address);
  else if (peer.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr, address, sizeof address);
  return address;
}

// Resolves host:port into a socket address; throws ConfigError.
sockaddr_storage resolve(const config::ComponentConfig& component, const std::string& host,
                         uint16_t port) {
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
  if (addr.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&addr)->sin_port = htons(port);
  else reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = htons(port);
  return addr;
}

}  // namespace

const ComponentSpec kSyslogTcpSourceSpec{
    .kind = config::Kind::source,
    .type = "multiport_syslogtcp",
    .aliases = {"syslogtcp", "org.apache.flume.source.MultiportSyslogTCPSource",
                "org.apache.flume.source.SyslogTcpSource"},
    .doc = "Syslog over TCP on one or more ports (LF/CRLF framing, RFC 3164/5424 headers).",
    .describe = [] { return config::describe(kSyslogTcpProperties); },
    .make_source = &make_syslog_tcp_source,
};

// ---------------------------------------------------------------------------------------------

class SyslogTcpSource::Worker {
 public:
  Worker(SyslogTcpSource& source, int index)
      : source_(source),
        index_(index),
        builder_(static_cast<size_t>(source.config_.batch_size),
                 static_cast<size_t>(source.config_.batch_size) * 128),
        read_buffer_(kReadChunk),
        decoder_(source.config_.keep_fields),
        per_port_(source.config_.ports.size()),
        clock_(ParseClock::now()) {
    builder_.set_header_names(source.config_.header_names);
    uv_loop_init(&loop_);
    loop_.data = this;
    uv_async_init(&loop_, &wakeup_, &Worker::on_wakeup);
    wakeup_.data = this;
    uv_prepare_init(&loop_, &prepare_);
    prepare_.data = this;
    uv_prepare_start(&prepare_, &Worker::on_prepare);
    if (const auto timeout = source.config_.idle_timeout.count(); timeout > 0) {
      idle_timer_ = std::make_unique<uv_timer_t>();
      uv_timer_init(&loop_, idle_timer_.get());
      idle_timer_->data = this;
      const uint64_t every = static_cast<uint64_t>(std::clamp<int64_t>(timeout / 4, 10, 1000));
      uv_timer_start(idle_timer_.get(), [](uv_timer_t* t) { static_cast<Worker*>(t->data)->close_idle(); }, every, every);
    }
  }

  ~Worker() {
    if (thread_.joinable()) thread_.join();
    if (!ran_) {  // never started: close the handles here
      close_all_handles();
      uv_run(&loop_, UV_RUN_DEFAULT);
    }
    uv_loop_close(&loop_);
  }

  // Binds host:port on this loop (io thread 0 only, before the threads start). Returns the
  // bound port.
  uint16_t listen_on(const config::ComponentConfig& component, uint16_t port) {
    const SyslogTcpConfig& c = source_.config_;
    sockaddr_storage addr = resolve(component, c.host, port);
    const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw config::ConfigError(std::string("socket(): ") + std::strerror(errno));
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // Set before listen(): accepted sockets inherit it, and the window scale is negotiated in
    // the SYN, so a larger buffer set later would not widen the window.
    if (c.read_buffer_size.bytes) apply_receive_buffer(fd, c.read_buffer_size.bytes);
    const socklen_t len = addr.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(fd, static_cast<int>(c.backlog)) != 0) {
      const int err = errno;
      ::close(fd);
      const std::string why = "cannot listen on " + c.host + ":" + std::to_string(port) + ": " +
                              std::strerror(err) +
                              (err == EADDRINUSE ? " (another process has this port)" : "");
      component.fail("ports", why);
    }
    sockaddr_storage bound{};
    socklen_t bound_len = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
    const uint16_t actual = ntohs(bound.ss_family == AF_INET
                                      ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                      : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    auto listener = std::make_unique<Listener>();
    listener->fd = fd;
    listener->port = actual;
    listener->worker = this;
    uv_poll_init(&loop_, &listener->poll, fd);
    listener->poll.data = listener.get();
    uv_poll_start(&listener->poll, UV_READABLE, &Worker::on_acceptable);
    listeners_.push_back(std::move(listener));
    return actual;
  }

  void run() {
    ran_ = true;
    thread_ = std::thread([this] {
      uv_run(&loop_, UV_RUN_DEFAULT);
    });
  }

  // Any thread: this loop takes over an accepted connection. False once the loop has ended
  // (the caller keeps the descriptor).
  bool hand_over(int fd, uint16_t port, const sockaddr_storage& peer) {
    {
      std::lock_guard lock(mutex_);
      if (loop_ended_) return false;
      incoming_.push_back({fd, port, peer});
    }
    uv_async_send(&wakeup_);
    return true;
  }

  // The first step of a stop, on the acceptor: take what the listeners' backlogs hold, close
  // the listeners, then return (or at the deadline, if the loop is stuck on a full channel).
  // From then on no connection is handed over.
  void stop_accepting(Deadline deadline) {
    std::unique_lock lock(mutex_);
    stop_accepting_requested_ = true;
    if (shutdown_deadline_ == Deadline::max()) shutdown_deadline_ = deadline;
    uv_async_send(&wakeup_);
    // At most half the time left, as the drain: the sinks need the rest.
    const auto now = Clock::now();
    const auto until = deadline > now ? now + (deadline - now) / 2 : now;
    accepting_stopped_.wait_until(lock, until, [&] { return accepting_stopped_flag_ || loop_ended_; });
  }

  void request_stop(Deadline deadline) {
    {
      std::lock_guard lock(mutex_);
      stop_requested_ = true;
      shutdown_deadline_ = deadline;
    }
    uv_async_send(&wakeup_);
  }

  void join() {
    if (thread_.joinable()) thread_.join();
  }

  void add_counters(SourceCounters& c) const {
    for (size_t i = 0; i < per_port_.size() && i < c.per_port.size(); ++i) per_port_[i].add_to(c.per_port[i]);
    c.connections_accepted += accepted_.get();
    c.connections_idle_closed += idle_closed_.get();
    c.connections_closed += closed_.get();
    c.accept_errors += accept_errors_.get();
    c.read_errors += read_errors_.get();
    c.events_dropped_at_shutdown += dropped_.get();
    c.bytes_unread_at_shutdown += unread_at_shutdown_.get();
    c.connections_refused_denied += refused_denied_.get();
    c.connections_refused_limit += refused_limit_.get();
  }

 private:
  struct Listener {
    uv_poll_t poll;
    int fd = -1;
    uint16_t port = 0;
    Worker* worker = nullptr;
  };

  struct Connection {
    uv_tcp_t handle;
    Worker* worker;
    uint16_t port;
    size_t port_index;  // into the source's ports, for the per-port counters
    Framer framer;
    Charset charset;
    uint64_t last_read_ms = 0;  // uv_now() of the last bytes
    // The client's address and host name as events carry them (clientIPHeader,
    // clientHostnameHeader): the IP's text, then the name's.
    std::string client;
    uint8_t client_ip_length = 0;
    uv_getnameinfo_t* pending_lookup = nullptr;  // reverse DNS in flight; reading waits for it
    Connection(Worker* w, uint16_t p, size_t index, const SyslogTcpConfig& c)
        : worker(w), port(p), port_index(index), framer(static_cast<size_t>(c.event_size), c.detect_octet_counting),
          charset(c.charset_of(p)) {}
  };

  struct CachedName {
    std::string name;
    uint64_t expires_ms;
  };

  static void apply_receive_buffer(int fd, uint64_t bytes) {
    const int wanted = static_cast<int>(bytes);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &wanted, sizeof wanted);
    int got = 0;
    socklen_t len = sizeof got;
    ::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len);
    static std::once_flag warned;
    // Linux reports twice the usable size it granted; less than asked means rmem_max capped it.
    if (got / 2 < wanted)
      std::call_once(warned, [&] {
        spdlog::warn("readBufferSize {} was capped by the kernel to {} bytes: raise "
                     "net.core.rmem_max (see sysctl/)", wanted, got / 2);
      });
  }

  static void on_wakeup(uv_async_t* handle) {
    auto* self = static_cast<Worker*>(handle->data);
    std::vector<Incoming> incoming;
    bool stop = false, stop_accepting = false;
    {
      std::lock_guard lock(self->mutex_);
      incoming.swap(self->incoming_);
      stop = self->stop_requested_;
      stop_accepting = self->stop_accepting_requested_;
    }
    // Handed over before the stop: opened and drained like every other connection.
    for (const Incoming& in : incoming) self->open_connection(in.fd, in.port, in.peer);
    if ((stop_accepting || stop) && !self->listeners_closed_) {
      self->accept_backlog();
      self->close_listeners();
      {
        std::lock_guard lock(self->mutex_);
        self->accepting_stopped_flag_ = true;
      }
      self->accepting_stopped_.notify_all();
    }
    if (stop && !self->stopping_) self->shut_down();
  }

  static void on_prepare(uv_prepare_t* handle) { static_cast<Worker*>(handle->data)->flush(); }

  static void on_acceptable(uv_poll_t* handle, int status, int) {
    auto* listener = static_cast<Listener*>(handle->data);
    // Bounded per wake-up so that one busy port cannot starve the loop's connections.
    if (status >= 0) listener->worker->accept_from(*listener, 256);
  }

  // Accepts up to `limit` connections; false once the backlog is empty (or accept fails).
  bool accept_from(Listener& listener, int limit) {
    auto& workers = source_.workers_;
    for (int i = 0; i < limit; ++i) {
      sockaddr_storage peer{};
      socklen_t peer_length = sizeof peer;
      const int fd = ::accept4(listener.fd, reinterpret_cast<sockaddr*>(&peer), &peer_length,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        const int err = errno;  // before logging, which may change it
        if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return false;
        accept_errors_.add(1);
        log_accept_error(err);
        if (err == EMFILE || err == ENFILE) pause_accepting();
        return false;
      }
      accepted_.add(1);
      if (!admit(fd, peer)) continue;
      Worker* target = workers[next_worker_++ % workers.size()].get();
      if (target == this || !target->hand_over(fd, listener.port, peer)) open_connection(fd, listener.port, peer);
    }
    return true;
  }

  // At shutdown: connections the kernel completed but nobody accepted yet.
  void accept_backlog() {
    int budget = kBacklogAcceptMax;
    for (auto& l : listeners_)
      while (budget > 0 && accept_from(*l, 256)) budget -= 256;
  }

  // On the acceptor thread: the allow/deny lists and maxConnections. A refused connection is
  // closed at once, counted by reason, and logged (rate-limited; the client's address only in
  // the log line, never in a metric label).
  bool admit(int fd, const sockaddr_storage& peer) {
    const SyslogTcpConfig& c = source_.config_;
    const char* reason = nullptr;
    if (c.clients.filters() && !c.clients.admits(peer)) {
      refused_denied_.add(1);
      reason = "not in allow or in deny";
    } else if (source_.open_connections_.load(std::memory_order_relaxed) >= c.max_connections) {
      refused_limit_.add(1);
      reason = "maxConnections reached";
    }
    if (!reason) {
      source_.open_connections_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    ::close(fd);
    closed_.add(1);
    if (auto note = refusal_log_.next()) {
      spdlog::warn("source {}: refused a connection from {}: {}{}", source_.name_, address_text(peer), reason,
                   *note);
    }
    return false;
  }

  void log_accept_error(int err) {
    if (auto note = accept_error_log_.next())
      spdlog::error("source {}: accept() failed: {}{} ({} accept errors so far){}", source_.name_, std::strerror(err),
                    err == EMFILE ? "; raise the file descriptor limit (LimitNOFILE / ulimit -n)" : "",
                    accept_errors_.get(), *note);
  }

  // Out of file descriptors: the listener would stay readable and spin; wait 100 ms.
  void pause_accepting() {
    for (auto& l : listeners_) uv_poll_stop(&l->poll);
    if (!pause_timer_) {
      pause_timer_ = std::make_unique<uv_timer_t>();
      uv_timer_init(&loop_, pause_timer_.get());
      pause_timer_->data = this;
    }
    uv_timer_start(pause_timer_.get(), [](uv_timer_t* t) {
      auto* self = static_cast<Worker*>(t->data);
      if (self->stopping_) return;
      for (auto& l : self->listeners_) uv_poll_start(&l->poll, UV_READABLE, &Worker::on_acceptable);
    }, 100, 0);
  }

  void open_connection(int fd, uint16_t port, const sockaddr_storage& peer) {
    size_t index = 0;
    while (index + 1 < source_.bound_ports_.size() && source_.bound_ports_[index] != port) ++index;
    auto* conn = new Connection(this, port, index, source_.config_);
    uv_tcp_init(&loop_, &conn->handle);
    conn->handle.data = conn;
    if (uv_tcp_open(&conn->handle, fd) != 0) {
      ::close(fd);
      uv_close(reinterpret_cast<uv_handle_t*>(&conn->handle),
               [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
      closed_.add(1);
      source_.open_connections_.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
    connections_.insert(conn);
    conn->last_read_ms = uv_now(&loop_);
    if (stopping_) half_close(conn);  // handed over while this loop drains: drained too
    const HeaderNames& names = *source_.config_.header_names;
    if (!names.client_ip.empty() || !names.client_host.empty()) {
      conn->client = address_text(peer);
      conn->client_ip_length = static_cast<uint8_t>(conn->client.size());
      if (!names.client_host.empty() && !start_lookup(conn, peer)) return;  // reads once the name is known
    }
    start_reading(conn);
  }

  void start_reading(Connection* conn) {
    uv_read_start(reinterpret_cast<uv_stream_t*>(&conn->handle), &Worker::on_alloc, &Worker::on_read);
  }

  // clientHostnameHeader: the name from this loop's cache, or a reverse lookup on libuv's
  // thread pool (getnameinfo blocks). Returns true when the name is already known.
  bool start_lookup(Connection* conn, const sockaddr_storage& peer) {
    const std::string ip = conn->client;
    if (const auto it = names_.find(ip); it != names_.end() && it->second.expires_ms > uv_now(&loop_)) {
      conn->client += it->second.name;
      return true;
    }
    if (stopping_) {  // no new lookup while draining: it could outlast the deadline
      conn->client += ip;
      return true;
    }
    auto* request = new uv_getnameinfo_t;
    request->data = conn;
    conn->pending_lookup = request;
    const int rc = uv_getnameinfo(&loop_, request, &Worker::on_name, reinterpret_cast<const sockaddr*>(&peer), NI_NAMEREQD);
    if (rc == 0) {
      lookups_.insert(request);
      return false;
    }
    delete request;
    conn->pending_lookup = nullptr;
    conn->client += ip;  // as Flume: no name, the address
    return true;
  }

  static void on_name(uv_getnameinfo_t* request, int status, const char* hostname, const char*) {
    // `hostname` lives inside the request: copy it before the request goes.
    const std::string found = status == 0 && hostname ? std::string(hostname).substr(0, 255) : std::string();
    auto* conn = static_cast<Connection*>(request->data);
    static_cast<Worker*>(request->loop->data)->lookups_.erase(request);
    delete request;
    if (!conn) return;  // the connection closed while its name was looked up
    Worker* self = conn->worker;
    conn->pending_lookup = nullptr;
    const std::string ip = conn->client.substr(0, conn->client_ip_length);
    const std::string name = found.empty() ? ip : found;
    const uint64_t ttl = static_cast<uint64_t>(self->source_.config_.hostname_cache_ttl.count());
    if (self->names_.size() > 100'000) self->names_.clear();  // bounded: a scan of many addresses
    // (libuv reports a cancelled lookup as UV_EAI_CANCELED.)
    if (status != UV_EAI_CANCELED && status != UV_ECANCELED) self->names_[ip] = CachedName{name, uv_now(&self->loop_) + ttl};
    conn->client += name;
    self->start_reading(conn);  // at shutdown too: the drain reads what it sent
  }

  // idleTimeout: connections that sent nothing for that long are closed (what they had sent
  // is framed and kept, as at end of stream).
  void close_idle() {
    const uint64_t now = uv_now(&loop_);
    const auto timeout = static_cast<uint64_t>(source_.config_.idle_timeout.count());
    uint64_t closed = 0;
    for (Connection* conn : std::vector<Connection*>(connections_.begin(), connections_.end())) {
      if (now - conn->last_read_ms < timeout || conn->pending_lookup) continue;
      consume(*conn, {}, StreamEnd::cut);
      close_connection(conn);
      ++closed;
    }
    if (!closed) return;
    idle_closed_.add(closed);
    if (auto note = idle_log_.next())
      spdlog::info("source {}: closed {} connection(s) idle for {} ms (idleTimeout){}", source_.name_, closed, timeout,
                   *note);
  }

  static void on_alloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
    auto* self = static_cast<Connection*>(handle->data)->worker;
    // One buffer per loop is enough: on_read consumes it before the next read.
    *buf = uv_buf_init(self->read_buffer_.data(), static_cast<unsigned>(self->read_buffer_.size()));
  }

  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
    auto* conn = static_cast<Connection*>(stream->data);
    Worker* self = conn->worker;
    if (nread > 0) {
      conn->last_read_ms = uv_now(&self->loop_);
      self->per_port_[conn->port_index].bytes.add(static_cast<uint64_t>(nread));
      self->consume(*conn, std::string_view(buf->base, static_cast<size_t>(nread)));
    } else if (nread < 0) {
      if (nread != UV_EOF) self->read_errors_.add(1);
      self->consume(*conn, {}, nread == UV_EOF ? StreamEnd::sender_closed : StreamEnd::cut);
      self->close_connection(conn);
    }
  }

  // How a connection's stream ends: not yet; the sender closed it (an unterminated last line
  // is a whole event); or we cut it (a partial frame is Incomplete).
  enum class StreamEnd { none, sender_closed, cut };

  void consume(Connection& conn, std::string_view data, StreamEnd end = StreamEnd::none) {
    FramerCounters framed;
    uint64_t invalid = 0, invalid_utf8 = 0;
    refresh_clock();
    const SyslogTcpConfig& c = source_.config_;
    const size_t batch_size = static_cast<size_t>(c.batch_size);
    auto on_frame = [&](std::string_view frame, bool truncated) {
      EventRecord& e = decoder_.decode(frame, truncated, conn.charset, clock_, builder_, invalid_utf8);
      e.port = conn.port;
      if (e.status == EventStatus::invalid) ++invalid;
      if (!conn.client.empty()) {
        e.client_offset = builder_.append_to_last(conn.client);
        e.client_ip_length = conn.client_ip_length;
        e.client_host_length = static_cast<uint8_t>(conn.client.size() - conn.client_ip_length);
      }
      if (builder_.size() >= batch_size) flush();
    };
    if (end != StreamEnd::none) conn.framer.finish(on_frame, framed, end == StreamEnd::cut);
    else conn.framer.feed(data, on_frame, framed);
    PortCounterSet& port = per_port_[conn.port_index];
    port.events.add(framed.frames);
    port.truncated.add(framed.truncated);
    port.cut.add(framed.cut);
    port.blank_lines.add(framed.blank_lines);
    port.octet_counted.add(framed.octet_counted);
    port.invalid.add(invalid);
    port.invalid_utf8.add(invalid_utf8);
    if (framed.truncated) log_truncated(conn, framed.truncated);
  }

  // A sender hit the per-connection limit (eventSize): one line per 10 s, naming it.
  void log_truncated(Connection& conn, uint64_t frames) {
    const auto note = truncation_log_.next();
    if (!note) return;
    sockaddr_storage peer{};
    int length = sizeof peer;
    uv_tcp_getpeername(&conn.handle, reinterpret_cast<sockaddr*>(&peer), &length);
    spdlog::warn("source {}: {} frame(s) from {} on port {} longer than eventSize {}: cut there, marked Incomplete "
                 "and counted (frames_truncated){}",
                 source_.name_, frames, address_text(peer), conn.port, source_.config_.event_size,
                 *note);
  }

  // The arrival time for this read's events; the zone is looked up at most once a second.
  void refresh_clock() {
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
    if (now_ms - clock_.now_ms >= 1000 || now_ms < clock_.now_ms) clock_ = ParseClock::now();
    else clock_.now_ms = now_ms;
  }

  // Puts the pending batch into every channel, waiting for room as long as it takes (that
  // wait is the backpressure) or until the shutdown deadline, re-read every half second.
  void flush() {
    if (builder_.empty()) return;
    EventBatch batch = builder_.seal();
    const auto& channels = source_.channels_;
    for (size_t i = 0; i < channels.size(); ++i) {
      EventBatch copy = i + 1 < channels.size() ? batch : std::move(batch);
      const auto blocked_since = Clock::now();
      auto next_log = blocked_since + kBlockedLogEvery;
      while (true) {
        Deadline deadline;
        {
          std::lock_guard lock(mutex_);
          deadline = shutdown_deadline_;  // set once a stop has begun
        }
        if (channels[i]->put(copy, std::min(deadline, Clock::now() + kPutSlice))) break;
        const auto now = Clock::now();
        if (now >= deadline) {
          dropped_.add(copy.size());
          if (auto note = dropped_log_.next())
            spdlog::error("source {}: channel {} still full at the shutdown deadline: {} events dropped (counted as "
                          "dropped_at_shutdown){}", source_.name_, channels[i]->name(), copy.size(),
                          *note);
          break;
        }
        if (now >= next_log) {
          next_log = now + kBlockedLogEvery;
          spdlog::warn("source {}: channel {} has been full for {}s; io thread {} is not reading "
                       "its sockets (TCP backpressure on the senders)",
                       source_.name_, channels[i]->name(),
                       std::chrono::duration_cast<std::chrono::seconds>(now - blocked_since).count(),
                       index_);
        }
      }
    }
  }

  void close_connection(Connection* conn) {
    if (!connections_.erase(conn)) return;
    if (conn->pending_lookup) conn->pending_lookup->data = nullptr;  // on_name must not touch it
    closed_.add(1);
    source_.open_connections_.fetch_sub(1, std::memory_order_relaxed);
    uv_close(reinterpret_cast<uv_handle_t*>(&conn->handle),
             [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
  }

  void close_listeners() {
    if (listeners_closed_) return;
    listeners_closed_ = true;
    for (auto& l : listeners_) {
      uv_poll_stop(&l->poll);
      ::close(l->fd);
      uv_close(reinterpret_cast<uv_handle_t*>(&l->poll), nullptr);
    }
    if (pause_timer_) uv_close(reinterpret_cast<uv_handle_t*>(pause_timer_.get()), nullptr);
    if (idle_timer_) uv_close(reinterpret_cast<uv_handle_t*>(idle_timer_.get()), nullptr);
  }

  void close_all_handles() {
    close_listeners();
    if (drain_timer_) uv_close(reinterpret_cast<uv_handle_t*>(drain_timer_.get()), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&wakeup_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&prepare_), nullptr);
  }

  static int64_t unread_bytes(Connection* conn) {
    uv_os_fd_t fd = -1;
    int pending = 0;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(&conn->handle), &fd) != 0 || ::ioctl(fd, SIOCINQ, &pending) != 0)
      return 0;
    return pending;
  }

  // On the loop thread, after the listeners closed: half-close every connection and read on
  // (drain_step) until each sender has closed, gone quiet, or the grace is over.
  void shut_down() {
    stopping_ = true;
    close_listeners();
    int64_t grace = kDrainGraceMaxMs;
    {
      std::lock_guard lock(mutex_);
      if (shutdown_deadline_ != Deadline::max())
        grace = std::min<int64_t>(grace, std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                                   shutdown_deadline_ - Clock::now()).count() / 2));
    }
    // Lookups still queued would keep the loop (and the agent) waiting on a slow resolver:
    // cancelled, their connections go on with the address as name. One already running
    // cannot be cancelled and ends when the resolver gives up.
    for (uv_getnameinfo_t* request : lookups_) uv_cancel(reinterpret_cast<uv_req_t*>(request));
    const uint64_t now = uv_now(&loop_);
    drain_started_ms_ = now;
    drain_until_ms_ = now + static_cast<uint64_t>(grace);
    for (Connection* conn : connections_) half_close(conn);
    drain_timer_ = std::make_unique<uv_timer_t>();
    uv_timer_init(&loop_, drain_timer_.get());
    drain_timer_->data = this;
    uv_timer_start(drain_timer_.get(), [](uv_timer_t* t) { static_cast<Worker*>(t->data)->drain_step(); }, 0, 10);
  }

  // Our FIN: a sender that watches its socket (rsyslog checks before each send; sluice-loadgen
  // does) stops writing to us and closes, and everything it wrote before is read.
  static void half_close(Connection* conn) {
    uv_os_fd_t fd = -1;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(&conn->handle), &fd) == 0) ::shutdown(fd, SHUT_WR);
  }

  void drain_step() {
    const uint64_t now = uv_now(&loop_);
    const bool grace_over = now >= drain_until_ms_;
    for (Connection* conn : std::vector<Connection*>(connections_.begin(), connections_.end())) {
      const int64_t unread = unread_bytes(conn);
      const bool quiet = unread == 0 && now - std::max(conn->last_read_ms, drain_started_ms_) >= kDrainQuietMs;
      if (!quiet && !grace_over) continue;
      if (unread > 0) {
        unread_at_shutdown_.add(static_cast<uint64_t>(unread));
        if (auto note = unread_log_.next())
          spdlog::error("source {}: shutdown grace over: {} bytes a sender had delivered were left unread and are "
                        "lost (counted as bytes_unread_at_shutdown){}", source_.name_, unread,
                        *note);
      }
      consume(*conn, {}, StreamEnd::cut);
      close_connection(conn);
    }
    if (!connections_.empty()) return;
    std::vector<Incoming> late;
    {
      // A hand-over may have come in since the wake-up was served: drain it too, and end only
      // with nothing left, so that no descriptor is ever left behind.
      std::lock_guard lock(mutex_);
      late.swap(incoming_);
      if (late.empty()) loop_ended_ = true;  // no hand-over from here on; close_all_handles ends the loop
    }
    if (!late.empty()) {
      for (const Incoming& in : late) open_connection(in.fd, in.port, in.peer);
      return;
    }
    uv_timer_stop(drain_timer_.get());
    flush();
    accepting_stopped_.notify_all();
    close_all_handles();
  }

  SyslogTcpSource& source_;
  const int index_;
  uv_loop_t loop_;
  uv_async_t wakeup_;
  uv_prepare_t prepare_;
  std::unique_ptr<uv_timer_t> pause_timer_;
  std::unique_ptr<uv_timer_t> drain_timer_;
  std::unique_ptr<uv_timer_t> idle_timer_;
  uint64_t drain_started_ms_ = 0;
  uint64_t drain_until_ms_ = 0;
  bool listeners_closed_ = false;
  std::thread thread_;
  bool ran_ = false;
  bool stopping_ = false;

  struct Incoming {
    int fd;
    uint16_t port;
    sockaddr_storage peer;
  };
  std::mutex mutex_;  // guards the six below
  std::vector<Incoming> incoming_;
  bool stop_accepting_requested_ = false;
  bool accepting_stopped_flag_ = false;  // the listeners are closed (acceptor)
  bool stop_requested_ = false;
  bool loop_ended_ = false;              // the last connection is closed: no more hand-overs
  Deadline shutdown_deadline_ = Deadline::max();
  std::condition_variable accepting_stopped_;

  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unordered_set<Connection*> connections_;
  size_t next_worker_ = 0;
  EventBatchBuilder builder_;
  std::vector<char> read_buffer_;
  EventDecoder decoder_;
  std::unordered_map<std::string, CachedName> names_;  // clientHostnameHeader: IP -> name
  std::unordered_set<uv_getnameinfo_t*> lookups_;      // in flight; freed by on_name
  LogLimiter accept_error_log_;

  Counter accepted_, closed_, accept_errors_, read_errors_, dropped_, unread_at_shutdown_, refused_denied_,
      refused_limit_, idle_closed_;
  LogLimiter refusal_log_, idle_log_, truncation_log_, unread_log_, dropped_log_;
  // Per configured port, in the source's order; sized before the loop runs.
  std::vector<PortCounterSet> per_port_;
  ParseClock clock_;
};

// ---------------------------------------------------------------------------------------------

SyslogTcpSource::SyslogTcpSource(config::ComponentConfig component, SyslogTcpConfig config,
                                 std::vector<Channel*> channels)
    : name_(component.name),
      component_(std::move(component)),
      config_(std::move(config)),
      channels_(std::move(channels)) {}

SyslogTcpSource::~SyslogTcpSource() {
  if (started_) stop(Clock::now());
}

void SyslogTcpSource::start() {
  const int threads = resolve_num_processors(config_.num_processors);
  for (int i = 0; i < threads; ++i) workers_.push_back(std::make_unique<Worker>(*this, i));
  for (uint16_t port : config_.ports) bound_ports_.push_back(workers_[0]->listen_on(component_, port));
  for (auto& w : workers_) w->run();
  started_ = true;
  std::string ports;
  for (uint16_t p : bound_ports_) ports += (ports.empty() ? "" : " ") + std::to_string(p);
  spdlog::info("source {}: listening on {} port(s) {} with {} io thread(s)", name_, config_.host,
               ports, threads);
}

void SyslogTcpSource::stop(Deadline deadline) {
  if (!started_) return;
  started_ = false;
  // The acceptor first, so that every connection is in some io thread's hands before any of
  // them starts its drain.
  workers_[0]->stop_accepting(deadline);
  for (auto& w : workers_) w->request_stop(deadline);
  for (auto& w : workers_) w->join();
}

SourceCounters SyslogTcpSource::counters() const {
  SourceCounters c;
  for (uint16_t port : bound_ports_) c.per_port.push_back(PortCounters{.port = port});
  for (const auto& w : workers_) w->add_counters(c);
  for (const PortCounters& port : c.per_port) {  // the source's event totals are the ports' sums
    c.events_received += port.events;
    c.bytes_received += port.bytes;
    c.events_invalid += port.invalid;
    c.events_truncated += port.truncated;
    c.frames_cut += port.cut;
    c.blank_lines += port.blank_lines;
    c.events_invalid_utf8 += port.invalid_utf8;
  }
  return c;
}

}  // namespace sluice::syslog_tcp
