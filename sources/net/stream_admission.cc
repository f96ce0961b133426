// A connection's way in: opened on this loop, its PROXY header read and filtered, its TLS
// handshake given a slot and a deadline, its client's name looked up; then it is read.
#include "sources/net/stream_worker.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>

#include "sources/net/stream_connection.h"

namespace sluice::net {
namespace {

// Reverse lookups waiting per io thread (clientHostnameHeader): a resolver that does not answer
// must not gather connections (and libuv's four pool threads) without end.
constexpr size_t kLookupsInFlightMax = kLookupsPerIoThreadMax;
}  // namespace

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
  assert((conn->acks() != nullptr) == shared_.protocol.answers());
  assert(!conn->says_farewell() || conn->acks());  // its drain waits for its replies
  if (conn->acks()) conn->acks()->connection = conn;
  connections_.insert(conn);
  conn->last_read_ms = conn->opened_ms = uv_now(&loop_);
  if (const auto age = config_.max_connection_age.count(); age > 0) {
    const auto jitter = static_cast<uint64_t>(config_.max_connection_age_jitter.count());
    conn->retire_at_ms = conn->opened_ms + static_cast<uint64_t>(age) + (jitter ? age_jitter_() % (jitter + 1) : 0);
  }
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
  if (stopping_ && !end_at_stop(conn)) return;  // handed over while this loop drains: drained too
  if (!conn->awaiting_proxy) know_budget(conn);
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
  know_budget(conn);
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
  // In a drain a connection that says farewell is read no more, but what followed its PROXY
  // header is answered; another is read on, as the drain does.
  if (reads_on(*conn)) start_reading(conn);
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

}  // namespace sluice::net
