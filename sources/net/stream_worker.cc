#include "sources/net/stream_worker.h"

#include <linux/sockios.h>
#include <netdb.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <climits>
#include <deque>

#include <spdlog/spdlog.h>

#include "sources/net/tls_session.h"

namespace sluice::net {
namespace {

constexpr size_t kReadChunk = kIoReadChunk;
constexpr auto kPutSlice = std::chrono::milliseconds(500);
// At shutdown each open connection is half-closed (our FIN tells the sender we are going) and
// read until the sender closes its side, or half of the shutdown time left (at most
// kDrainGraceMaxMs) has passed. Not sooner: a quiet socket with nothing in its receive queue
// says nothing of a segment being retransmitted, of the sender's own send queue, or of a
// sender that has called close() with bytes still on their way; closing then would answer them
// with a reset and lose them uncounted.
constexpr int64_t kDrainGraceMaxMs = 10000;
// Reverse lookups waiting per io thread (clientHostnameHeader): a resolver that does not answer
// must not gather connections (and libuv's four pool threads) without end.
constexpr size_t kLookupsInFlightMax = kLookupsPerIoThreadMax;

int64_t unread_bytes(uv_tcp_t& handle) {
  uv_os_fd_t fd = -1;
  int pending = 0;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(&handle), &fd) != 0 || ::ioctl(fd, SIOCINQ, &pending) != 0) return 0;
  return pending;
}

// Our FIN: a sender that watches its socket (rsyslog checks before each send; sluice-loadgen
// does) stops writing to us and closes, and everything it wrote before is read.
void half_close(uv_tcp_t& handle) {
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(&handle), &fd) == 0) ::shutdown(fd, SHUT_WR);
}

}  // namespace

struct StreamWorker::Connection {
  uv_tcp_t handle;
  StreamWorker* worker;
  uint16_t port;
  size_t port_index;  // into the source's ports, for the per-port counters
  // What it speaks; whether it is answered (has an AckQueue) decides how it ends.
  const std::unique_ptr<StreamProtocol> protocol;
  const bool answered;
  uint64_t last_read_ms = 0;  // uv_now() of the last bytes
  // The client's address and host name as events carry them (clientIPHeader,
  // clientHostnameHeader): the IP's text, then the name's.
  std::string client;
  uint8_t client_ip_length = 0;
  uint64_t pending_lookup = 0;           // reverse DNS in flight (its id); reading waits for it
  std::unique_ptr<TlsSession> tls;       // ssl = true
  bool reading_paused = false;           // its replies wait unsent beyond kUnsentRepliesMax
  bool awaiting_handshake_slot = false;  // ssl = true: not read until a handshake slot is free
  bool holds_handshake_slot = false;     // its handshake counts against ssl.maxHandshakes
  uint64_t opened_ms = 0;                // uv_now() at open: the handshake's clock
  // The client: the socket's peer, or whom a PROXY header names (proxyProtocol).
  sockaddr_storage peer;
  bool awaiting_proxy = false;  // proxyProtocol: the header is not whole yet
  // Bytes read but not yet consumed: a PROXY header's start, or what followed it while the
  // client's name is looked up.
  std::string held;
  Connection(StreamWorker* w, uint16_t p, size_t index, std::unique_ptr<StreamProtocol> speaks, const StreamSettings& c,
             const sockaddr_storage& from)
      : worker(w),
        port(p),
        port_index(index),
        protocol(std::move(speaks)),
        answered(protocol->acks() != nullptr),
        peer(from),
        awaiting_proxy(c.proxy_protocol != ProxyProtocol::none) {}
  std::string peer_text() const { return address_text(peer); }
};

StreamWorker::StreamWorker(IoShared& shared, int index)
    : shared_(shared),
      config_(shared.config),
      counters_(shared.probe.io(index)),
      handshake_slots_(handshake_slots_per_io_thread(config_.ssl_max_handshakes, shared.io_threads)),
      builder_(config_.batch_size, config_.batch_size * 128),
      read_buffer_(kReadChunk),
      plain_buffer_(shared.tls ? kReadChunk : 0),
      events_(shared.events.make()),
      names_(static_cast<uint64_t>(config_.hostname_cache_ttl.count())),
      delivery_(shared.source_name, shared.channels, shared.selector, shared.routes,
                "io thread " + std::to_string(index) + " is not reading its sockets (TCP backpressure on the senders)",
                kPutSlice,
                {.before_try =
                     [this] {
                       // A reload's request to let go of the ports is served while a full
                       // channel holds this loop.
                       Deadline deadline;
                       bool stop_accepting = false;
                       {
                         std::lock_guard lock(mutex_);
                         deadline = shutdown_deadline_;  // set once a stop with a deadline has begun
                         stop_accepting = stop_accepting_requested_ || stop_requested_;
                       }
                       if (stop_accepting) serve_stop_accepting();
                       return deadline;
                     },
                 .dropped =
                     [this](const Channel& channel, size_t events) {
                       shared_.probe.dropped_at_shutdown(counters_, events, channel.name());
                     }}) {
  builder_.set_header_names(config_.header_names);
  uv_loop_init(&loop_);
  loop_.data = this;
  uv_async_init(&loop_, &wakeup_, &StreamWorker::on_wakeup);
  wakeup_.data = this;
  uv_prepare_init(&loop_, &prepare_);
  prepare_.data = this;
  uv_prepare_start(&prepare_, &StreamWorker::on_prepare);
  if (shared_.protocol.answers()) {
    uv_async_init(&loop_, &acks_async_, &StreamWorker::on_acks_ready);
    acks_async_.data = this;
    waker_ = std::make_shared<AckWaker>(&acks_async_);
  }
  if (const auto timeout = config_.idle_timeout.count(); timeout > 0) {
    idle_timer_ = std::make_unique<uv_timer_t>();
    uv_timer_init(&loop_, idle_timer_.get());
    idle_timer_->data = this;
    const uint64_t every = static_cast<uint64_t>(std::clamp<int64_t>(timeout / 4, 10, 1000));
    uv_timer_start(
        idle_timer_.get(), [](uv_timer_t* t) { static_cast<StreamWorker*>(t->data)->close_idle(); }, every, every);
  }
  if (shared_.resolver) {  // clientHostnameHeader: reverse lookups, bounded by hostnameLookupTimeout
    uv_async_init(&loop_, &names_async_, &StreamWorker::on_names);
    names_async_.data = this;
    inbox_ = std::make_shared<ReverseResolver::Inbox>(&names_async_);
    lookup_timer_ = std::make_unique<uv_timer_t>();
    uv_timer_init(&loop_, lookup_timer_.get());
    lookup_timer_->data = this;
    const auto every =
        static_cast<uint64_t>(std::clamp<int64_t>(config_.hostname_lookup_timeout.count() / 4, 10, 1000));
    uv_timer_start(
        lookup_timer_.get(), [](uv_timer_t* t) { static_cast<StreamWorker*>(t->data)->check_lookups(); }, every, every);
  }
  if (shared_.tls || config_.proxy_protocol != ProxyProtocol::none) {  // handshakes and PROXY headers
    handshake_timer_ = std::make_unique<uv_timer_t>();
    uv_timer_init(&loop_, handshake_timer_.get());
    handshake_timer_->data = this;
    const int64_t shortest =
        std::min(shared_.tls ? config_.ssl_handshake_timeout.count() : INT64_MAX,
                 config_.proxy_protocol != ProxyProtocol::none ? config_.proxy_header_timeout.count() : INT64_MAX);
    const auto every = static_cast<uint64_t>(std::clamp<int64_t>(shortest / 4, 25, 1000));
    uv_timer_start(
        handshake_timer_.get(), [](uv_timer_t* t) { static_cast<StreamWorker*>(t->data)->check_handshakes(); }, every,
        every);
  }
}

StreamWorker::~StreamWorker() {
  if (thread_.joinable()) thread_.join();
  if (!ran_) {  // never started: close the handles here
    close_all_handles();
    uv_run(&loop_, UV_RUN_DEFAULT);
  }
  uv_loop_close(&loop_);
}

std::vector<uint16_t> StreamWorker::start_accepting(const config::ComponentConfig& component,
                                                    const std::vector<uint16_t>& ports, Acceptor::Deal deal) {
  acceptor_ = std::make_unique<Acceptor>(&loop_, config_, shared_.probe, counters_, shared_.open_connections,
                                         std::move(deal), shared_.listeners.get());
  std::vector<uint16_t> bound;
  for (size_t i = 0; i < ports.size(); ++i) bound.push_back(acceptor_->listen_on(component, ports[i], i));
  return bound;
}

void StreamWorker::run() {
  ran_ = true;
  thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
}

bool StreamWorker::hand_over(int fd, uint16_t port, const sockaddr_storage& peer) {
  {
    std::lock_guard lock(mutex_);
    if (loop_ended_) return false;
    incoming_.push_back({fd, port, peer});
  }
  uv_async_send(&wakeup_);
  return true;
}

void StreamWorker::stop_accepting(Deadline wait_until) {
  std::unique_lock lock(mutex_);
  stop_accepting_requested_ = true;
  uv_async_send(&wakeup_);
  // Served by the loop, or by a put blocked on a full channel (flush): promptly either way.
  state_changed_.wait_until(lock, wait_until, [&] { return accepting_stopped_flag_ || loop_ended_; });
}

void StreamWorker::request_stop(Deadline deadline) {
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
    shutdown_deadline_ = deadline;
  }
  uv_async_send(&wakeup_);
}

bool StreamWorker::wait_finished(Deadline deadline) {
  std::unique_lock lock(mutex_);
  return state_changed_.wait_until(lock, deadline, [&] { return finished_; });
}

void StreamWorker::join() {
  if (thread_.joinable()) thread_.join();
}

void StreamWorker::on_wakeup(uv_async_t* handle) {
  auto* self = static_cast<StreamWorker*>(handle->data);
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
  if (stop_accepting || stop) self->serve_stop_accepting();
  if (stop && !self->stopping_)
    self->shut_down();
  else if (stop)
    self->bound_grace();  // a stop begun without a deadline (a reload's) now has one
}

// The backlog accepted, the listeners closed: from here on the ports are free for another source.
void StreamWorker::serve_stop_accepting() {
  if (listeners_closed_) return;
  if (acceptor_) acceptor_->accept_backlog();
  close_listeners();
  {
    std::lock_guard lock(mutex_);
    accepting_stopped_flag_ = true;
  }
  state_changed_.notify_all();
}

void StreamWorker::on_prepare(uv_prepare_t* handle) { static_cast<StreamWorker*>(handle->data)->flush(); }

void StreamWorker::open_connection(int fd, uint16_t port, const sockaddr_storage& peer) {
  const std::vector<uint16_t>& ports = shared_.bound_ports;
  size_t index = 0;
  while (index + 1 < ports.size() && ports[index] != port) ++index;
  auto* conn = new Connection(this, port, index, shared_.protocol.open(port, waker_), config_, peer);
  uv_tcp_init(&loop_, &conn->handle);
  conn->handle.data = conn;
  if (uv_tcp_open(&conn->handle, fd) != 0) {
    ::close(fd);
    uv_close(reinterpret_cast<uv_handle_t*>(&conn->handle),
             [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
    counters_.closed.add(1);
    shared_.open_connections.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  // A protocol with replies must come from a factory that answers: only then is there a waker.
  assert(conn->answered == shared_.protocol.answers());
  if (conn->answered) conn->protocol->acks()->connection = conn;
  connections_.insert(conn);
  conn->last_read_ms = conn->opened_ms = uv_now(&loop_);
  if (shared_.tls) {
    if (stopping_) {  // no handshake starts in a drain: nothing of it was read, nothing is lost
      close_connection(conn);
      return;
    }
    // Handshakes in progress hold OpenSSL's state and buffers: at most ssl.maxHandshakes at once;
    // the others wait here, unread (ssl.handshakeTimeout runs from their accept all the same).
    if (handshakes_ >= handshake_slots_) {
      conn->awaiting_handshake_slot = true;
      awaiting_handshake_.push_back(conn);
      publish_handshakes();
      return;
    }
    if (!begin_tls(conn)) return;
  }
  begin_reading(conn);
}

// A TLS connection takes a handshake slot and its session. False if it could not (out of
// memory): closed as a connection that failed to open.
bool StreamWorker::begin_tls(Connection* conn) {
  SSL* ssl = shared_.tls->new_session();
  if (!ssl) {
    close_connection(conn);
    return false;
  }
  conn->tls = std::make_unique<TlsSession>(ssl);
  conn->holds_handshake_slot = true;
  ++handshakes_;
  publish_handshakes();
  return true;
}

void StreamWorker::publish_handshakes() {
  counters_.tls_handshaking.value.store(handshakes_, std::memory_order_relaxed);
  counters_.tls_awaiting_slot.value.store(awaiting_handshake_.size(), std::memory_order_relaxed);
}

void StreamWorker::begin_reading(Connection* conn) {
  if (stopping_) {               // handed over while this loop drains: drained too
    if (conn->answered) return;  // nothing read, nothing to answer: the drain says farewell
    half_close(conn->handle);
  }
  // Behind a PROXY-protocol balancer the client is known once its header is read.
  if (!conn->awaiting_proxy && !know_client(conn)) return;  // reads once the name is known
  start_reading(conn);
}

// A handshake ended (established, refused, failed, or its connection closed): its slot goes to
// the connection that has waited longest.
void StreamWorker::release_handshake_slot(Connection* conn) {
  if (!conn->holds_handshake_slot) return;
  conn->holds_handshake_slot = false;
  --handshakes_;
  while (!stopping_ && handshakes_ < handshake_slots_ && !awaiting_handshake_.empty()) {
    Connection* next = awaiting_handshake_.front();
    awaiting_handshake_.pop_front();
    next->awaiting_handshake_slot = false;
    if (begin_tls(next)) begin_reading(next);
  }
  publish_handshakes();
}

// The client's address (and name) as its events carry them. False while a reverse lookup runs:
// reading starts once it is done.
bool StreamWorker::know_client(Connection* conn) {
  const HeaderNames& names = *config_.header_names;
  if (names.client_ip.empty() && names.client_host.empty()) return true;
  conn->client = address_text(conn->peer);
  conn->client_ip_length = static_cast<uint8_t>(conn->client.size());
  return names.client_host.empty() || start_lookup(conn, conn->peer);
}

// proxyProtocol: collects the header; once whole, the client it names is filtered (allow,
// deny) and known, and the bytes after the header go on as the stream (or the TLS handshake).
void StreamWorker::receive_proxy_header(Connection* conn, std::string_view data) {
  conn->held.append(data);
  const ProxyHeader header = parse_proxy_header(conn->held, config_.proxy_protocol);
  if (header.state == ProxyHeader::State::incomplete) {
    if (conn->held.size() <= kProxyHeaderMax) return;
    refuse_before_data(conn, Refusal::proxy_header,
                       "no header in the first " + std::to_string(kProxyHeaderMax) + " bytes");
    return;
  }
  if (header.state == ProxyHeader::State::refused) {
    refuse_before_data(conn, Refusal::proxy_header, header.error);
    return;
  }
  conn->awaiting_proxy = false;
  if (header.client) conn->peer = *header.client;
  conn->held.erase(0, header.length);
  if (config_.clients.filters() && !config_.clients.admits(conn->peer)) {
    refuse_before_data(conn, Refusal::denied, "");
    return;
  }
  if (!know_client(conn)) {  // the rest waits in `held` for the name (on_name)
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&conn->handle));
    return;
  }
  conn->opened_ms = uv_now(&loop_);  // a TLS handshake's clock starts after the header
  receive_held(conn);
}

void StreamWorker::receive_held(Connection* conn) {
  if (conn->held.empty()) return;
  const std::string rest = std::move(conn->held);
  conn->held.clear();
  receive(conn, rest);
}

void StreamWorker::refuse_before_data(Connection* conn, Refusal why, const std::string& detail) {
  shared_.probe.refused(counters_, why, conn->peer_text(), detail);
  close_connection(conn);
}

void StreamWorker::start_reading(Connection* conn) {
  conn->opened_ms = uv_now(&loop_);  // the handshake's clock starts with the reading (after any lookup)
  uv_read_start(reinterpret_cast<uv_stream_t*>(&conn->handle), &StreamWorker::on_alloc, &StreamWorker::on_read);
}

// clientHostnameHeader: the name from this loop's cache, or a reverse lookup on the source's
// resolver threads (reverse_resolver.h). Returns true when the name is already known. A resolver
// that does not answer holds no connection long: at most kLookupsInFlightMax lookups wait per io
// thread (beyond, the address is the name at once), and one not answered by
// hostnameLookupTimeout lets its connection go on with the address (check_lookups).
bool StreamWorker::start_lookup(Connection* conn, const sockaddr_storage& peer) {
  const std::string ip = conn->client;
  if (const auto name = names_.find(ip, uv_now(&loop_))) {
    conn->client += *name;
    return true;
  }
  if (stopping_) {  // no new lookup while draining: it could outlast the deadline
    conn->client += ip;
    return true;
  }
  if (lookups_.size() >= kLookupsInFlightMax) {
    shared_.probe.lookup_given_up(counters_, LookupOutcome::skipped, ip);
    conn->client += ip;
    return true;
  }
  const uint64_t id = ++last_lookup_id_;
  lookups_[id] = Lookup{conn, ip, uv_now(&loop_)};
  conn->pending_lookup = id;
  shared_.resolver->lookup(inbox_, id, peer);
  return false;
}

void StreamWorker::on_names(uv_async_t* handle) {
  auto* self = static_cast<StreamWorker*>(handle->data);
  for (ReverseResolver::Answer& answer : self->inbox_->take()) {
    const auto it = self->lookups_.find(answer.id);
    if (it == self->lookups_.end()) continue;
    const Lookup lookup = std::move(it->second);
    self->lookups_.erase(it);
    // No name: the address, as Flume. A late answer (its connection went on without it, or
    // closed) still serves the next connection from that address.
    const std::string name = answer.name.empty() ? lookup.ip : answer.name;
    self->names_.store(lookup.ip, name, uv_now(&self->loop_));
    if (lookup.conn) self->name_known(lookup.conn, name);
  }
}

// The client's name is known (or given up on): reading starts, with what waited for it.
void StreamWorker::name_known(Connection* conn, const std::string& name) {
  if (const auto it = lookups_.find(conn->pending_lookup); it != lookups_.end()) it->second.conn = nullptr;
  conn->pending_lookup = 0;
  conn->client += name;
  // At shutdown an answered connection is read no more (the drain says farewell), but what
  // followed its PROXY header is answered; another is read on, as the drain does.
  if (!(stopping_ && conn->answered)) start_reading(conn);
  receive_held(conn);  // what followed a PROXY header
}

// hostnameLookupTimeout: a connection whose name has not come goes on with its address. Its
// lookup stays counted among those in flight until the resolver answers (or gives up).
void StreamWorker::check_lookups() {
  const uint64_t now = uv_now(&loop_);
  const auto timeout = static_cast<uint64_t>(config_.hostname_lookup_timeout.count());
  std::vector<std::pair<Connection*, std::string>> late;
  for (const auto& [id, lookup] : lookups_)
    if (lookup.conn && now - lookup.started_ms >= timeout) late.emplace_back(lookup.conn, lookup.ip);
  for (const auto& [conn, ip] : late) {
    shared_.probe.lookup_given_up(counters_, LookupOutcome::timed_out, ip);
    name_known(conn, ip);
  }
}

// idleTimeout: connections that sent nothing for that long are closed (what they had sent
// is framed and kept, as at end of stream).
void StreamWorker::close_idle() {
  const uint64_t now = uv_now(&loop_);
  const auto timeout = static_cast<uint64_t>(config_.idle_timeout.count());
  uint64_t closed = 0;
  for (Connection* conn : std::vector<Connection*>(connections_.begin(), connections_.end())) {
    if (now - conn->last_read_ms < timeout || conn->pending_lookup) continue;
    if (conn->answered) {
      end_answered_connection(conn);
    } else {
      consume(*conn, {}, StreamEnd::cut);
      close_connection(conn);
    }
    ++closed;
  }
  if (closed) shared_.probe.idle_closed(counters_, closed);
}

void StreamWorker::on_alloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  auto* self = static_cast<Connection*>(handle->data)->worker;
  // One buffer per loop is enough: on_read consumes it before the next read.
  *buf = uv_buf_init(self->read_buffer_.data(), static_cast<unsigned>(self->read_buffer_.size()));
}

void StreamWorker::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* conn = static_cast<Connection*>(stream->data);
  StreamWorker* self = conn->worker;
  if (nread > 0) {
    conn->last_read_ms = uv_now(&self->loop_);
    self->counters_.per_port[conn->port_index].bytes.add(static_cast<uint64_t>(nread));
    self->receive(conn, std::string_view(buf->base, static_cast<size_t>(nread)));
  } else if (nread < 0) {
    if (nread != UV_EOF) self->counters_.read_errors.add(1);
    self->consume(*conn, {}, nread == UV_EOF ? StreamEnd::sender_closed : StreamEnd::cut);
    self->close_connection(conn);
  }
}

void StreamWorker::receive(Connection* conn, std::string_view data) {
  if (conn->awaiting_proxy)
    receive_proxy_header(conn, data);
  else if (conn->tls)
    receive_tls(conn, data);
  else
    consume(*conn, data);
}

// What the socket gave a TLS connection: through its session to the framer. A peer is admitted
// (clientAuth, allowedPeers) the moment its handshake completes, before any of its data is read.
void StreamWorker::receive_tls(Connection* conn, std::string_view cipher) {
  TlsSession& tls = *conn->tls;
  std::string out;
  // A consume may end an answered connection (a broken session): the rest is not for it.
  const auto plain = [&](std::string_view data) { consume(*conn, data); };
  const bool was_handshaking = tls.handshaking();
  TlsSession::State state = tls.feed(cipher, plain, out, plain_buffer_);
  if (!connections_.count(conn)) return;
  if (!tls.handshaking()) release_handshake_slot(conn);
  if (was_handshaking && state == TlsSession::State::established) {
    if (const auto refused = shared_.tls->admit(tls.ssl())) {
      tls.refuse(*refused, out);
      send_raw(conn, out);
      refuse_tls(conn, *refused);
      return;
    }
    shared_.probe.tls_established(counters_);
    // The handshake's last records first: a protocol's replies to data that came with them follow.
    send_raw(conn, out);
    out.clear();
    state = tls.feed({}, plain, out, plain_buffer_);  // data that came with the handshake's end
    if (!connections_.count(conn)) return;
  }
  send_raw(conn, out);
  if (state == TlsSession::State::failed) {
    refuse_tls(conn, *tls.failure());
  } else if (state == TlsSession::State::closed) {  // close_notify: the client's stream ended cleanly
    consume(*conn, {}, StreamEnd::sender_closed);
    close_connection(conn);
  }
}

void StreamWorker::refuse_tls(Connection* conn, TlsFailure why) {
  shared_.probe.tls_refused(counters_, why, conn->peer_text(), conn->tls->peer_subject());
  consume(*conn, {}, StreamEnd::cut);  // what an established connection had sent before it broke
  close_connection(conn);
}

// Writes what a TLS session must send: at once if the socket takes it, else queued behind
// earlier writes (libuv keeps their order); freed when written or when the connection closes.
bool StreamWorker::send_raw(Connection* conn, std::string& bytes) {
  if (bytes.empty()) return true;
  auto* stream = reinterpret_cast<uv_stream_t*>(&conn->handle);
  uv_buf_t whole = uv_buf_init(bytes.data(), static_cast<unsigned>(bytes.size()));
  // Behind earlier writes still queued, nothing may jump ahead: queue this too.
  const int written = uv_stream_get_write_queue_size(stream) ? UV_EAGAIN : uv_try_write(stream, &whole, 1);
  if (written < 0 && written != UV_EAGAIN) return false;  // the socket failed: its read side ends the connection
  const size_t done = written > 0 ? static_cast<size_t>(written) : 0;
  if (done == bytes.size()) return true;
  struct PendingWrite {
    uv_write_t request;
    std::string bytes;
  };
  auto* pending = new PendingWrite{{}, bytes.substr(done)};
  pending->request.data = pending;
  uv_buf_t rest = uv_buf_init(pending->bytes.data(), static_cast<unsigned>(pending->bytes.size()));
  if (uv_write(&pending->request, stream, &rest, 1, [](uv_write_t* request, int status) {
        // The request lives inside what it frees: take its handle first. (A connection being
        // closed has its writes cancelled before it is freed.)
        auto* written = static_cast<Connection*>(request->handle->data);
        delete static_cast<PendingWrite*>(request->data);
        if (status != 0) return;
        written->worker->resume_if_drained(*written);
        // A session its sender closed ends once its last reply is out (send_replies).
        if (written->answered) written->worker->send_replies(*written);
      }) != 0) {
    delete pending;
    return false;
  }
  if (uv_stream_get_write_queue_size(stream) > kUnsentRepliesMax && !conn->reading_paused) {
    uv_read_stop(stream);
    conn->reading_paused = true;
    shared_.probe.reading_paused(counters_, conn->peer_text());
  }
  return true;
}

void StreamWorker::resume_if_drained(Connection& conn) {
  if (!conn.reading_paused || !connections_.count(&conn)) return;
  auto* stream = reinterpret_cast<uv_stream_t*>(&conn.handle);
  if (uv_stream_get_write_queue_size(stream) > kUnsentRepliesMax / 2) return;
  conn.reading_paused = false;
  // An answered connection is read no more once the drain has begun.
  if (!(stopping_ && conn.answered)) uv_read_start(stream, &StreamWorker::on_alloc, &StreamWorker::on_read);
}

// ssl.handshakeTimeout: a connection still handshaking that long after it was accepted (however
// slowly it sends) is closed and counted; so is one whose PROXY header is not whole by
// proxyHeaderTimeout.
void StreamWorker::check_handshakes() {
  const uint64_t now = uv_now(&loop_);
  const auto handshake_timeout = static_cast<uint64_t>(config_.ssl_handshake_timeout.count());
  const auto header_timeout = static_cast<uint64_t>(config_.proxy_header_timeout.count());
  // While a full channel held this loop (backpressure) nobody's handshake could go on: that time
  // is not the clients'. libuv runs timers before it reads, so without this a client whose reply
  // waited in the socket would be refused the moment the loop came back.
  const uint64_t period = handshake_timer_ ? uv_timer_get_repeat(handshake_timer_.get()) : 0;
  if (last_handshake_check_ms_ && now - last_handshake_check_ms_ > 2 * period) {
    const uint64_t held = now - last_handshake_check_ms_ - period;
    for (Connection* conn : connections_)
      if (conn->awaiting_proxy || (conn->tls && conn->tls->handshaking())) conn->opened_ms += held;
  }
  last_handshake_check_ms_ = now;
  for (Connection* conn : std::vector<Connection*>(connections_.begin(), connections_.end())) {
    if (conn->awaiting_handshake_slot || conn->pending_lookup) continue;
    if (conn->awaiting_proxy && now - conn->opened_ms >= header_timeout)
      refuse_before_data(conn, Refusal::proxy_header, "no complete header within proxyHeaderTimeout");
    else if (!conn->awaiting_proxy && conn->tls && conn->tls->handshaking() &&
             now - conn->opened_ms >= handshake_timeout)
      refuse_tls(conn, TlsFailure::timeout);
  }
  // Then those waiting for a handshake slot (after the timeouts above freed theirs, so that the
  // oldest waiting gets one first): at most ssl.handshakeTimeout from accept. One that gets a slot
  // starts its handshake's own clock then.
  while (!awaiting_handshake_.empty() && now - awaiting_handshake_.front()->opened_ms >= handshake_timeout) {
    Connection* conn = awaiting_handshake_.front();
    shared_.probe.tls_refused(counters_, TlsFailure::timeout, conn->peer_text(),
                              "none (it waited for a handshake slot: ssl.maxHandshakes)");
    close_connection(conn);
  }
}

// Where the connection's protocol puts its messages: made events in the batch (and, for an
// answered connection, each one's reply bound to it), the batch put once it is full.
class StreamWorker::ConnectionMessages final : public MessageSink {
 public:
  ConnectionMessages(StreamWorker& worker, Connection& conn, ReadTally& tally)
      : worker_(worker),
        conn_(conn),
        tally_(tally),
        origin_{conn.port, conn.port_index, conn.client, conn.client_ip_length} {}

  void message(std::string_view message, bool truncated, AckQueue::Ticket ticket) override {
    EventBatchBuilder& batch = worker_.builder_;
    if (!worker_.events_->add(message, truncated, origin_, batch, tally_)) {
      // Filtered out by an interceptor: done, as far as its sender is concerned (counted).
      if (conn_.answered) conn_.protocol->acks()->done(ticket, 1);
      return;
    }
    const ChannelSelector& selector = *worker_.shared_.selector;
    if (!selector.single_route()) batch.set_last_route(selector.route(batch));
    if (conn_.answered) {
      // With ackAfter = kafka each required channel's commit counts down; on put, flush() tells
      // the acknowledger once.
      const bool on_put = worker_.shared_.protocol.acknowledge_on_put();
      if (!worker_.batch_acks_) {
        worker_.batch_acks_ = std::make_shared<BatchAcknowledger>();
        if (!on_put) batch.set_acknowledger(worker_.batch_acks_);
      }
      worker_.batch_acks_->add(batch.size() - 1, conn_.protocol->acks(), ticket,
                               on_put ? 1 : worker_.delivery_.commits_expected(batch.last_route()));
    }
    if (batch.size() >= worker_.config_.batch_size) worker_.flush();
  }

 private:
  StreamWorker& worker_;
  Connection& conn_;
  ReadTally& tally_;
  const MessageOrigin origin_;
};

void StreamWorker::consume(Connection& conn, std::string_view data, StreamEnd end) {
  // An answered connection may have been ended by an earlier chunk of the same read (a broken
  // session); another is consumed before it is closed.
  if (conn.answered && !connections_.count(&conn)) return;
  ReadTally tally;
  events_->begin_read();  // the arrival time for this read's events
  ConnectionMessages messages(*this, conn, tally);
  std::string broken;
  if (end == StreamEnd::none)
    broken = conn.protocol->feed(data, messages, tally);
  else
    conn.protocol->finish(end == StreamEnd::cut, messages, tally);
  shared_.probe.framed(counters_, conn.port_index, tally, conn.port, [&] { return conn.peer_text(); });
  if (!conn.answered) return;
  if (end == StreamEnd::none) send_replies(conn);
  if (!broken.empty()) {
    shared_.probe.protocol_broken(counters_, conn.peer_text(), broken);
    end_answered_connection(&conn);
  }
}

// What the connection's AckQueue has ready, in order. A session the sender closed ends once its
// last reply (the close's) has been written: librelp's server closes then too.
void StreamWorker::send_replies(Connection& conn) {
  if (!connections_.count(&conn)) return;  // already ended (its replies go nowhere)
  // Whether every reply was released is read before the take: a commit on a sink thread may
  // release the last ones between the two, and read after, they would be left behind the close.
  const bool all_released = conn.protocol->acks()->waiting() == 0;
  uint64_t events = 0;
  std::string replies = conn.protocol->acks()->take_ready(events);
  if (!replies.empty() && !send_plain(conn, std::move(replies))) {
    // Replies that cannot be sent would leave a gap the sender cannot see: end the session instead.
    shared_.probe.protocol_broken(counters_, conn.peer_text(), "a reply could not be written");
    close_connection(&conn);
    return;
  }
  if (events) shared_.probe.acknowledged(counters_, events);
  if (!conn.protocol->closing() || !all_released) return;
  if (conn.tls) {  // a RELP client reads: it gets a clean TLS end
    std::string out;
    conn.tls->close_notify(out);
    send_raw(&conn, out);
  }
  if (uv_stream_get_write_queue_size(reinterpret_cast<uv_stream_t*>(&conn.handle)) == 0) close_connection(&conn);
}

bool StreamWorker::send_plain(Connection& conn, std::string bytes) {
  if (bytes.empty()) return true;
  if (!conn.tls) return send_raw(&conn, bytes);
  std::string records;
  return conn.tls->write(bytes, records) && send_raw(&conn, records);
}

// The agent ends an answered connection: its farewell (RELP's serverclose: "resend what I did
// not answer"), then the close. What it sent unanswered is not lost: the sender still has it.
void StreamWorker::end_answered_connection(Connection* conn) {
  send_replies(*conn);
  if (!connections_.count(conn)) return;
  send_plain(*conn, conn->protocol->farewell());
  close_connection(conn);
}

void StreamWorker::on_acks_ready(uv_async_t* handle) {
  auto* self = static_cast<StreamWorker*>(handle->data);
  for (const std::shared_ptr<AckQueue>& queue : self->waker_->take_ready())
    if (auto* conn = static_cast<Connection*>(queue->connection)) self->send_replies(*conn);
}

// Puts the pending batch into every channel (syslog::ChannelDelivery), waiting for room as long
// as it takes (that wait is the backpressure) or until the shutdown deadline, re-read every half
// second.
void StreamWorker::flush() {
  if (builder_.empty()) return;
  // The batch's acknowledger (a protocol's): with acknowledge-on-put, told here once every
  // channel took the batch; a batch dropped at the shutdown deadline is never answered.
  const std::shared_ptr<BatchAcknowledger> acks = std::move(batch_acks_);
  const auto flush_started = Clock::now();
  RoutedBatch routed = builder_.seal_routed(delivery_.routes());
  if (acks && !routed.original_index.empty()) acks->reorder(routed.original_index);
  const bool put_everywhere = delivery_.deliver(std::move(routed));
  if (acks && put_everywhere && shared_.protocol.acknowledge_on_put()) acks->committed(0, acks->size());
  // While a full channel held this loop its senders could not be read: that time is not
  // taken from their drain's grace.
  if (stopping_) {
    const auto held = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - flush_started).count();
    drain_until_ms_ = std::min(drain_until_ms_ + static_cast<uint64_t>(held), drain_cap_ms_);
  }
}

void StreamWorker::close_connection(Connection* conn) {
  if (!connections_.erase(conn)) return;
  if (conn->awaiting_handshake_slot) {
    awaiting_handshake_.erase(std::find(awaiting_handshake_.begin(), awaiting_handshake_.end(), conn));
    publish_handshakes();
  }
  release_handshake_slot(conn);
  if (const auto it = lookups_.find(conn->pending_lookup); it != lookups_.end())
    it->second.conn = nullptr;                                       // its answer must not touch it
  if (conn->answered) conn->protocol->acks()->connection = nullptr;  // replies still to come go nowhere
  counters_.closed.add(1);
  shared_.open_connections.fetch_sub(1, std::memory_order_relaxed);
  uv_close(reinterpret_cast<uv_handle_t*>(&conn->handle),
           [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
}

void StreamWorker::close_listeners() {
  if (listeners_closed_) return;
  listeners_closed_ = true;
  if (acceptor_) acceptor_->close();
  if (idle_timer_) uv_close(reinterpret_cast<uv_handle_t*>(idle_timer_.get()), nullptr);
  if (handshake_timer_) uv_close(reinterpret_cast<uv_handle_t*>(handshake_timer_.get()), nullptr);
  if (lookup_timer_) uv_close(reinterpret_cast<uv_handle_t*>(lookup_timer_.get()), nullptr);
}

void StreamWorker::close_all_handles() {
  close_listeners();
  if (drain_timer_) uv_close(reinterpret_cast<uv_handle_t*>(drain_timer_.get()), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&wakeup_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&prepare_), nullptr);
  if (waker_) {
    waker_->detach();  // commits after this find no loop to wake
    uv_close(reinterpret_cast<uv_handle_t*>(&acks_async_), nullptr);
  }
  if (inbox_) {
    inbox_->detach();  // answers after this are dropped: nothing waits for a running lookup
    uv_close(reinterpret_cast<uv_handle_t*>(&names_async_), nullptr);
  }
}

// On the loop thread, after the listeners closed: half-close every connection and read on
// (drain_step) until each sender has closed or the grace is over.
void StreamWorker::shut_down() {
  stopping_ = true;
  close_listeners();
  drain_until_ms_ = uv_now(&loop_) + static_cast<uint64_t>(kDrainGraceMaxMs);
  drain_cap_ms_ = UINT64_MAX;
  bound_grace();
  // No connection waits for a name in the drain: lookups still queued are dropped, and every
  // connection waiting goes on with its address as name (a running lookup's answer only fills the
  // cache, if it comes before the loop ends).
  if (shared_.resolver) {
    for (uint64_t id : shared_.resolver->cancel_queued(inbox_.get())) {
      const auto it = lookups_.find(id);
      if (it == lookups_.end()) continue;
      const Lookup lookup = std::move(it->second);
      lookups_.erase(it);
      if (!lookup.conn) continue;
      shared_.probe.lookup_given_up(counters_, LookupOutcome::stopped, lookup.ip);
      name_known(lookup.conn, lookup.ip);
    }
    std::vector<std::pair<Connection*, std::string>> waiting;
    for (const auto& [id, lookup] : lookups_)
      if (lookup.conn) waiting.emplace_back(lookup.conn, lookup.ip);
    for (const auto& [conn, ip] : waiting) {
      shared_.probe.lookup_given_up(counters_, LookupOutcome::stopped, ip);
      name_known(conn, ip);
    }
  }
  // TLS connections get the same FIN and no close_notify: a sender that never reads would close
  // with our alert unread, which makes its kernel reset the connection and drop what it had not
  // sent yet. The FIN alone ends our side cleanly.
  // An answered connection is not half-closed (its replies must still go out): it is no longer
  // read, and ends once every message it sent is answered or the grace is over.
  // Connections still waiting for a handshake slot sent nothing we read: closed now.
  while (!awaiting_handshake_.empty()) close_connection(awaiting_handshake_.front());
  for (Connection* conn : connections_) {
    if (conn->answered)
      uv_read_stop(reinterpret_cast<uv_stream_t*>(&conn->handle));
    else
      half_close(conn->handle);
  }
  drain_timer_ = std::make_unique<uv_timer_t>();
  uv_timer_init(&loop_, drain_timer_.get());
  drain_timer_->data = this;
  uv_timer_start(
      drain_timer_.get(), [](uv_timer_t* t) { static_cast<StreamWorker*>(t->data)->drain_step(); }, 0, 10);
}

// The drain's grace ends at most half the time left before the shutdown deadline, if there is
// one (the sinks need the rest); a reload's stop has none until the agent itself stops.
void StreamWorker::bound_grace() {
  Deadline deadline;
  {
    std::lock_guard lock(mutex_);
    deadline = shutdown_deadline_;
  }
  if (deadline == Deadline::max()) return;
  const int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  drain_cap_ms_ = std::min(drain_cap_ms_, uv_now(&loop_) + static_cast<uint64_t>(std::max<int64_t>(0, left / 2)));
  drain_until_ms_ = std::min(drain_until_ms_, drain_cap_ms_);
}

void StreamWorker::drain_step() {
  const uint64_t now = uv_now(&loop_);
  const bool grace_over = now >= drain_until_ms_;
  for (Connection* conn : std::vector<Connection*>(connections_.begin(), connections_.end())) {
    if (conn->answered) {
      if (grace_over || conn->protocol->acks()->waiting() == 0) end_answered_connection(conn);
      continue;
    }
    // A TLS connection's unread bytes include a record it has only part of, and a proxied one's
    // what it holds back while its client's name is looked up (or its header's start).
    // Its sender's FIN ends it (on_read); only the grace's end cuts it.
    if (!grace_over) continue;
    const int64_t unread = unread_bytes(conn->handle) + (conn->tls ? static_cast<int64_t>(conn->tls->buffered()) : 0) +
                           static_cast<int64_t>(conn->held.size());
    shared_.probe.cut_at_shutdown(counters_, static_cast<uint64_t>(std::max<int64_t>(unread, 0)), conn->peer_text());
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
  {
    std::lock_guard lock(mutex_);
    finished_ = true;  // everything read is in the channels (or counted as dropped)
  }
  state_changed_.notify_all();
  close_all_handles();
}

}  // namespace sluice::net
