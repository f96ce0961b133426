// What a connection is sent: a TLS session's records, and for a protocol that answers (RELP),
// its replies in order as their events are done, and how such a session ends.
#include "sources/net/stream_worker.h"

#include <algorithm>

#include "sources/net/stream_connection.h"

namespace sluice::net {
namespace {

// After a farewell: how long its sender may take to close, and how often that is looked at.
constexpr uint64_t kFarewellLingerMs = 2000;
constexpr uint64_t kFarewellLingerMaxMs = 10000;
constexpr uint64_t kFarewellCheckMs = 100;
}  // namespace

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
        written->worker->send_replies(*written);
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
  if (may_read(conn)) uv_read_start(stream, &StreamWorker::on_alloc, &StreamWorker::on_read);
}

// What the connection's AckQueue has ready, in order. A session the sender closed ends once its
// last reply (the close's) has been written: librelp's server closes then too.
void StreamWorker::send_replies(Connection& conn) {
  // Ended already (its replies go nowhere), a protocol that never answers, or its farewell is out
  // (nothing may follow it; what was not answered its sender resends).
  if (!connections_.count(&conn) || !conn.acks() || conn.said_farewell) return;
  // Whether every reply was released comes with the take, under its lock: a commit on a sink
  // thread between a separate question and the take would either leave its replies behind the
  // close, or leave the session open with nothing left to wake it.
  bool all_released = false;
  uint64_t events = 0;
  AckQueue::Released released;
  std::string replies = conn.acks()->take_ready(events, &all_released, &released);
  if (!replies.empty() && !send_plain(conn, std::move(replies))) {
    // Replies that cannot be sent would leave a gap the sender cannot see: end the session instead.
    shared_.probe.protocol_broken(counters_, conn.peer_text(), "a reply could not be written");
    close_connection(&conn);
    return;
  }
  shared_.probe.acknowledged(counters_, events, released);
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
  conn.protocol->encode_outgoing(bytes);
  if (!conn.tls) return send_raw(&conn, bytes);
  std::string records;
  return conn.tls->write(bytes, records) && send_raw(&conn, records);
}

// The agent ends a connection that answers: its farewell (RELP's serverclose: "resend what I did
// not answer"), then the close. What it sent unanswered is not lost: the sender still has it.
void StreamWorker::say_farewell(Connection* conn) {
  if (conn->said_farewell) return;
  if (conn->awaiting_handshake_slot) {  // never read, nothing to answer: closed
    close_connection(conn);
    return;
  }
  send_replies(*conn);
  if (!connections_.count(conn)) return;
  if (!send_plain(*conn, conn->protocol->farewell())) {
    close_connection(conn);
    return;
  }
  // Not closed at once: a close with bytes of its sender unread in our socket makes the kernel
  // reset the connection and drop the replies still queued to it, and the sender would send again
  // what was answered. Our FIN follows the replies and the farewell (a shutdown request waits for
  // the writes); what the sender still sends is read and dropped (it resends what was not
  // answered) until it closes, or kFarewellLingerMs passes (close_lingering).
  auto* stream = reinterpret_cast<uv_stream_t*>(&conn->handle);
  conn->said_farewell = true;
  conn->farewell_at_ms = uv_now(&loop_);
  conn->shutdown_request.data = conn;
  if (uv_shutdown(&conn->shutdown_request, stream, [](uv_shutdown_t*, int) {}) != 0) {
    close_connection(conn);
    return;
  }
  uv_read_start(stream, &StreamWorker::on_alloc, &StreamWorker::on_read);
  farewells_.insert(conn);
  if (!uv_is_active(reinterpret_cast<uv_handle_t*>(farewell_timer_.get())))
    uv_timer_start(
        farewell_timer_.get(), [](uv_timer_t* t) { static_cast<StreamWorker*>(t->data)->close_lingering(); },
        kFarewellCheckMs, kFarewellCheckMs);
}

// Closed once the replies and the farewell are written and its sender closed or kFarewellLingerMs
// passed; a sender that does not read them holds it kFarewellLingerMaxMs at most.
void StreamWorker::close_lingering() {
  const uint64_t now = uv_now(&loop_);
  for (Connection* conn : std::vector<Connection*>(farewells_.begin(), farewells_.end())) {
    const bool written = uv_stream_get_write_queue_size(reinterpret_cast<uv_stream_t*>(&conn->handle)) == 0;
    const uint64_t lingered = now - conn->farewell_at_ms;
    if ((written && (conn->sender_closed || lingered >= kFarewellLingerMs)) || lingered >= kFarewellLingerMaxMs)
      close_connection(conn);
  }
  if (farewells_.empty()) uv_timer_stop(farewell_timer_.get());
}

void StreamWorker::on_acks_ready(uv_async_t* handle) {
  auto* self = static_cast<StreamWorker*>(handle->data);
  for (const std::shared_ptr<AckQueue>& queue : self->waker_->take_ready())
    if (auto* conn = static_cast<Connection*>(queue->connection)) self->send_replies(*conn);
}

}  // namespace sluice::net
