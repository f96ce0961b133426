// The ends of connections the agent chooses: idleTimeout, and the drain at a stop (every
// connection half-closed and read until its sender closes, or answered and said farewell).
#include "sources/net/stream_worker.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <vector>

#include "sources/net/stream_connection.h"

namespace sluice::net {
namespace {

// At shutdown each open connection is half-closed (our FIN tells the sender we are going) and
// read until the sender closes its side, or half of the shutdown time left (at most
// kDrainGraceMaxMs) has passed. Not sooner: a quiet socket with nothing in its receive queue
// says nothing of a segment being retransmitted, of the sender's own send queue, or of a
// sender that has called close() with bytes still on their way; closing then would answer them
// with a reset and lose them uncounted.
constexpr int64_t kDrainGraceMaxMs = 10000;

int64_t unread_bytes(uv_tcp_t& handle) {
  uv_os_fd_t fd = -1;
  int pending = 0;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(&handle), &fd) != 0 || ::ioctl(fd, SIOCINQ, &pending) != 0) return 0;
  return pending;
}
}  // namespace

// The agent ends a connection now: one that says farewell is answered what is due and told; the
// other's bytes are finished as at its stream's end (framed and kept).
void StreamWorker::end_now(Connection* conn) {
  if (conn->says_farewell()) {
    say_farewell(conn);
    return;
  }
  consume(*conn, {}, StreamEnd::cut);
  close_connection(conn);
}

// At a stop (or handed over in a drain): our FIN, and it is read on until its sender closes; or,
// one that says farewell, it is read no more (false), its replies still go out (drain_connection).
// TLS connections get the same FIN and no close_notify: a sender that never reads would close
// with our alert unread, which makes its kernel reset the connection and drop what it had not
// sent yet. The FIN alone ends our side cleanly.
bool StreamWorker::end_at_stop(Connection* conn) {
  if (conn->said_farewell) return true;  // read to its end already (and dropped)
  if (conn->says_farewell()) {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&conn->handle));
    return false;
  }
  half_close(conn->handle);
  return true;
}

bool StreamWorker::reads_on(const Connection& conn) const {
  return !((stopping_ || conn.asked_to_reconnect) && conn.says_farewell());
}

// maxConnectionAge: a connection past its age is ended as a stop ends it (end_at_stop), so that
// its sender reconnects, through its balancer, to whichever agent that deals it: our FIN, and it
// is read until its sender closes (never cut: a sender that ignores the FIN is read on and counted
// as lingering); one that says farewell is read no more and, once every message it sent is
// answered, told (RELP's serverclose) and closed. Only admitted connections (client known,
// handshake done) age: the others have their own timeouts.
void StreamWorker::retire_aged() {
  const uint64_t now = uv_now(&loop_);
  uint64_t asked = 0, lingering = 0;
  std::string lingering_peer;
  for (Connection* conn : std::vector<Connection*>(connections_.begin(), connections_.end())) {
    if (!conn->asked_to_reconnect) {
      if (now < conn->retire_at_ms || !conn->admitted()) continue;
      conn->asked_to_reconnect = true;
      conn->asked_to_reconnect_ms = now;
      ++asked;
      end_at_stop(conn);
    }
    if (conn->says_farewell()) {
      // Its replies wait for their events (a full channel, a Kafka down): it waits with them.
      if (!conn->said_farewell && conn->acks()->waiting() == 0) say_farewell(conn);
    } else if (now - conn->asked_to_reconnect_ms >= static_cast<uint64_t>(kDrainGraceMaxMs)) {
      ++lingering;
      lingering_peer = conn->peer_text();
    }
  }
  if (asked) shared_.probe.aged(counters_, asked);
  shared_.probe.aged_lingering(counters_, lingering, lingering_peer);
}

// idleTimeout: connections that sent nothing for that long are closed (what they had sent
// is framed and kept, as at end of stream).
void StreamWorker::close_idle() {
  const uint64_t now = uv_now(&loop_);
  const auto timeout = static_cast<uint64_t>(config_.idle_timeout.count());
  uint64_t closed = 0;
  for (Connection* conn : std::vector<Connection*>(connections_.begin(), connections_.end())) {
    if (now - conn->last_read_ms < timeout || conn->pending_lookup || conn->over_budget || conn->said_farewell)
      continue;
    end_now(conn);
    ++closed;
  }
  if (closed) shared_.probe.idle_closed(counters_, closed);
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
  // Connections still waiting for a handshake slot sent nothing we read: closed now.
  while (!awaiting_handshake_.empty()) close_connection(awaiting_handshake_.front());
  lift_holds();
  for (Connection* conn : connections_) end_at_stop(conn);
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

// One that says farewell ends once every message it sent is answered, or the grace is over; the
// other once its sender closes (on_read), or is cut when the grace is over.
void StreamWorker::drain_connection(Connection* conn, bool grace_over) {
  if (conn->says_farewell()) {
    if (conn->said_farewell) {  // its sender closes, or its linger ends (close_lingering)
      if (grace_over) close_connection(conn);
      return;
    }
    if (grace_over || conn->acks()->waiting() == 0) say_farewell(conn);
    return;
  }
  if (!grace_over) return;
  // A TLS connection's unread bytes include a record it has only part of, and a proxied one's
  // what it holds back while its client's name is looked up (or its header's start).
  const int64_t unread = unread_bytes(conn->handle) + (conn->tls ? static_cast<int64_t>(conn->tls->buffered()) : 0) +
                         static_cast<int64_t>(conn->held.size());
  shared_.probe.cut_at_shutdown(counters_, static_cast<uint64_t>(std::max<int64_t>(unread, 0)), conn->peer_text());
  consume(*conn, {}, StreamEnd::cut);
  close_connection(conn);
}

void StreamWorker::drain_step() {
  const uint64_t now = uv_now(&loop_);
  const bool grace_over = now >= drain_until_ms_;
  for (Connection* conn : std::vector<Connection*>(connections_.begin(), connections_.end()))
    drain_connection(conn, grace_over);
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
