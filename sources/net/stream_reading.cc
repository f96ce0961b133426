// What a connection's reads become: bytes through TLS to its protocol, the messages it yields
// made events in the loop's batch, the batch put into the channels.
#include "sources/net/stream_worker.h"

#include "sources/net/stream_connection.h"

namespace sluice::net {

void StreamWorker::on_alloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  auto* self = static_cast<Connection*>(handle->data)->worker;
  // One buffer per loop is enough: on_read consumes it before the next read.
  *buf = uv_buf_init(self->read_buffer_.data(), static_cast<unsigned>(self->read_buffer_.size()));
}

void StreamWorker::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* conn = static_cast<Connection*>(stream->data);
  StreamWorker* self = conn->worker;
  if (conn->said_farewell) {  // read and dropped: its sender resends what was not answered
    if (nread < 0) {
      conn->sender_closed = true;
      uv_read_stop(stream);
      // Closed once our replies and farewell are out (close_lingering looks again until then).
      if (uv_stream_get_write_queue_size(stream) == 0) self->close_connection(conn);
    }
    return;
  }
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

// Where the connection's protocol puts its messages: made events in the batch (and, for an
// answered connection, each one's reply bound to it), the batch put once it is full.
class StreamWorker::ConnectionMessages final : public MessageSink {
 public:
  ConnectionMessages(StreamWorker& worker, Connection& conn, ReadTally& tally)
      : worker_(worker),
        conn_(conn),
        tally_(tally),
        origin_{conn.port, conn.port_index, conn.client, conn.client_ip_length} {}

  void message(std::string_view message, pipeline::MessageTraits traits, AckQueue::Ticket ticket) override {
    pipeline::EventMaker& maker = worker_.maker_;
    if (call_left_) --call_left_;
    if (!maker.make(message, traits, origin_, tally_)) {
      // Filtered out by an interceptor: done, as far as its sender is concerned (counted).
      if (AckQueue* acks = conn_.acks()) acks->done(ticket, 1);
      return;
    }
    EventBatchBuilder& batch = maker.batch();
    if (conn_.acks()) {
      // With ackAfter = kafka each required channel's commit counts down; on put, flush() tells
      // the acknowledger once.
      const bool on_put = worker_.shared_.protocol.acknowledge_on_put();
      if (!worker_.batch_acks_) {
        worker_.batch_acks_ = std::make_shared<BatchAcknowledger>();
        if (!on_put) batch.set_acknowledger(worker_.batch_acks_);
      }
      worker_.batch_acks_->add(batch.size() - 1, conn_.protocol->acks(), ticket,
                               on_put ? 1 : maker.delivery().commits_expected(batch.last_route()));
    }
    // A call's events go into one batch (put whole, or all answered "not now"): its last one
    // may make the batch larger than batchSize.
    if (maker.full() && call_left_ == 0) worker_.flush();
  }

  void begin_call(size_t messages) override {
    if (!worker_.maker_.fits(messages)) worker_.flush();
    call_left_ = messages;
  }

 private:
  size_t call_left_ = 0;  // messages of the call begun still to come
  StreamWorker& worker_;
  Connection& conn_;
  ReadTally& tally_;
  const pipeline::MessageOrigin origin_;
};

void StreamWorker::consume(Connection& conn, std::string_view data, StreamEnd end) {
  // An earlier chunk of the same read may have ended it (a broken session): the rest is not for
  // it, nor once it said farewell (what follows is dropped: its sender resends it). (Every other
  // end consumes the connection before it closes it.)
  if (!connections_.count(&conn) || conn.said_farewell) return;
  ReadTally tally;
  maker_.begin_read();  // the arrival time for this read's events
  ConnectionMessages messages(*this, conn, tally);
  std::string broken;
  if (end == StreamEnd::none)
    broken = conn.protocol->feed(data, messages, tally);
  else
    conn.protocol->finish(end == StreamEnd::cut, messages, tally);
  shared_.probe.framed(counters_, conn.port_index, tally, conn.port, [&] { return conn.peer_text(); });
  if (tally.refused) shared_.probe.calls_refused(counters_, conn.peer_text(), tally.refused, tally.refused_why);
  shared_.probe.calls_received(counters_, tally.calls);
  if (end == StreamEnd::none) charge_client(conn, tally.frames, data.size());
  if (!conn.acks()) return;
  if (end == StreamEnd::none) send_replies(conn);
  if (!broken.empty()) {
    shared_.probe.protocol_broken(counters_, conn.peer_text(), broken);
    say_farewell(&conn);
  }
}

// Puts the pending batch into every channel (pipeline::ChannelDelivery), waiting for room as long
// as it takes (that wait is the backpressure) or until the shutdown deadline, re-read every half
// second.
void StreamWorker::flush() {
  if (maker_.empty()) return;
  // The batch's acknowledger (a protocol's): with acknowledge-on-put, told here once every
  // channel took the batch; a batch dropped at the shutdown deadline is never answered.
  const std::shared_ptr<BatchAcknowledger> acks = std::move(batch_acks_);
  const auto flush_started = Clock::now();
  RoutedBatch routed = maker_.seal();
  if (acks && !routed.original_index.empty()) acks->reorder(routed.original_index);
  const bool put_everywhere = maker_.deliver(std::move(routed));
  if (acks && put_everywhere && shared_.protocol.acknowledge_on_put()) acks->committed(0, acks->size());
  // A protocol that can say "not now" says it for every call of a batch a full channel did not
  // take (what another channel took of it comes again: counted).
  if (acks && maker_.delivery().gave_up()) {
    acks->failed_all();
    shared_.probe.refused_full(counters_, acks->size(), maker_.delivery().held_before_give_up(), full_channel_);
  }
  // While a full channel held this loop its senders could not be read: that time is not
  // taken from their drain's grace.
  if (stopping_) {
    const auto held = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - flush_started).count();
    drain_until_ms_ = std::min(drain_until_ms_ + static_cast<uint64_t>(held), drain_cap_ms_);
  }
}

}  // namespace sluice::net
