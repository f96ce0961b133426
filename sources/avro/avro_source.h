#pragma once
// type = avro: Flume's Avro RPC in (org.apache.flume.source.AvroSource): what Flume's Avro sinks
// and `flume-ng avro-client` send, each call answered OK only once every event of it is done
// downstream (ackAfter, as RELP's). Its events are plain: a body and the headers they came
// with (avro_format.h). The connections, their io threads, admission, TLS and the drain are the
// stream server's (sources/net/stream_server.h); each connection speaks an AvroSession.

#include "agent/api/component_spec.h"
#include "sources/avro/avro_session.h"
#include "sources/net/stream_protocol.h"
#include "sources/net/stream_worker.h"

namespace sluice::avro {

class AvroProtocolFactory final : public net::StreamProtocolFactory {
 public:
  AvroProtocolFactory(AvroSettings settings, bool acknowledge_on_put)
      : settings_(settings), acknowledge_on_put_(acknowledge_on_put) {}
  std::unique_ptr<net::StreamProtocol> open(uint16_t, std::shared_ptr<net::AckWaker> waker) const override {
    return std::make_unique<AvroSession>(settings_, std::move(waker));
  }
  bool answers() const override { return true; }
  bool acknowledge_on_put() const override { return acknowledge_on_put_; }
  std::string_view name() const override { return "Avro"; }
  std::string_view ack_property() const override { return "ackAfter"; }
  std::chrono::milliseconds refuse_when_full_after() const override { return settings_.channel_full_timeout; }
  size_t most_messages_per_call() const override { return settings_.max_batch_events; }
  // A partial frame (a string that may have doubled), the frames of one read joined, and its
  // answers unsent (up to the bound, plus one read's: an answer is at most 15 bytes a call).
  uint64_t connection_bytes() const override {
    // deflate: zlib's two streams (deflate's window and hash tables, inflate's window) and a piece.
    const uint64_t zlib = settings_.deflate ? 512 * 1024 : 0;
    return 2 * (settings_.max_frame_bytes + 64) + settings_.max_frame_bytes + net::kUnsentRepliesMax +
           net::kIoReadChunk + zlib;
  }

 private:
  const AvroSettings settings_;
  const bool acknowledge_on_put_;
};

extern const ComponentSpec kAvroSourceSpec;

}  // namespace sluice::avro
