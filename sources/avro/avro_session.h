#pragma once
// One connection of Flume's Avro RPC on the server's side (avro_ipc.h): frames in, each call's
// events out as messages (each an AvroFlumeEvent's bytes, made an event by the Avro format), and
// one answer per call, sent once every event of the call is done (stream_protocol.h: committed
// by every required channel, or taken by it with acknowledge-on-put). A call whose events were
// all filtered out by interceptors is answered OK at once, as is an empty batch.
//
// What a Flume sender does not send is refused without reading on: a frame past maxFrameSize,
// more events than maxBatchEvents in one call, more than 1,024 headers on an event, a header name
// or value longer than an event's header block holds (255 / 65,534 bytes): the call is answered
// with an error (Flume's sink
// then rolls back and sends it again on a new connection) and counted. A stream that cannot be
// framed at all, or a second handshake that matches none, ends the connection.

#include <chrono>
#include <memory>
#include <string>

#include "sources/avro/avro_deflate.h"
#include "sources/avro/avro_ipc.h"
#include "sources/net/stream_protocol.h"

namespace sluice::avro {

struct AvroSettings {
  size_t max_frame_bytes = 0;   // maxFrameSize: one request's buffers together
  size_t max_batch_events = 0;  // one appendBatch's events at most: maxBatchEvents, or less (below)
  // What sets it: "maxBatchEvents", or a channel's transactionCapacity (a call goes into each of
  // its channels in one put: one that cannot take it whole could never answer it).
  std::string max_batch_why = "maxBatchEvents";
  bool deflate = false;  // compression-type = deflate: both directions in zlib (avro_deflate.h)
  // channelFullTimeout: how long a full channel may hold a call before it is answered FAILED.
  std::chrono::milliseconds channel_full_timeout{0};
};

class AvroSession final : public net::StreamProtocol {
 public:
  AvroSession(const AvroSettings& settings, std::shared_ptr<net::AckWaker> waker);

  std::string feed(std::string_view data, net::MessageSink& sink, net::ReadTally& tally) override;
  // A partial frame at the end is no call: unanswered, its sender sends it again.
  void finish(bool, net::MessageSink&, net::ReadTally&) override {}
  size_t buffered() const override { return decoder_.buffered(); }
  const std::shared_ptr<net::AckQueue>& acks() const override { return acks_; }
  // Its sender closes the connection when it is done; at a stop the answers due go out first.
  Ending ending() const override { return Ending::answer_then_farewell; }
  bool closing() const override { return false; }
  // Avro IPC has no farewell: closing the connection says it (a Flume sink reconnects).
  std::string farewell() const override { return {}; }
  // compression-type = deflate: the answers compressed, in the order they leave.
  void encode_outgoing(std::string& bytes) override;

  // Calls refused (answered with an error) on this connection, for the tests and the log.
  uint64_t refused_calls() const { return refused_calls_; }

 private:
  // Decompressed bytes into frames and their calls; returns "" or why the stream cannot go on.
  std::string feed_frames(std::string_view data, net::MessageSink& sink, net::ReadTally& tally);
  // One frame's call; returns "" or why the stream cannot go on.
  std::string call(const Frame& frame, net::MessageSink& sink, net::ReadTally& tally);
  // Answers the call with an error now (nothing of it was taken), counted in `tally`.
  void refuse(int32_t serial, std::optional<HandshakeMatch> handshake, const std::string& why, net::ReadTally& tally);

  const AvroSettings settings_;
  FrameDecoder decoder_;
  std::shared_ptr<net::AckQueue> acks_;
  bool handshaken_ = false;  // a handshake matched: later calls carry none
  int unmatched_handshakes_ = 0;
  uint64_t refused_calls_ = 0;
  std::vector<Frame> frames_;                // reused between reads
  std::vector<std::string_view> events_;     // reused between calls
  std::unique_ptr<DeflateStream> deflater_;  // deflate: what we send
  std::unique_ptr<InflateStream> inflater_;  // deflate: what we read
};

}  // namespace sluice::avro
