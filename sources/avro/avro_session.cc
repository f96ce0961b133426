#include "sources/avro/avro_session.h"

#include "agent/api/event_headers.h"

namespace sluice::avro {
namespace {
// Inflated bytes are framed in pieces of this size.
constexpr size_t kInflatePiece = 256 * 1024;
// Answers are a few bytes: Flume's default level.
constexpr int kAnswerLevel = 6;
// The kinds of call, as counted (ReadTally::calls, AckQueue's kinds are these + 1).
constexpr size_t kAppend = 0, kAppendBatch = 1;
}  // namespace

AvroSession::AvroSession(const AvroSettings& settings, std::shared_ptr<net::AckWaker> waker)
    : settings_(settings),
      decoder_(settings.max_frame_bytes),
      acks_(std::make_shared<net::AckQueue>(std::move(waker))),
      deflater_(settings.deflate ? std::make_unique<DeflateStream>(kAnswerLevel) : nullptr),
      inflater_(settings.deflate ? std::make_unique<InflateStream>() : nullptr) {}

std::string AvroSession::feed(std::string_view data, net::MessageSink& sink, net::ReadTally& tally) {
  if (!inflater_) return feed_frames(data, sink, tally);
  if (!deflater_->ok()) return "zlib could not allocate its state";
  // In pieces: what a small read inflates to is framed as it comes, never held whole.
  std::string broken;
  std::string not_zlib = inflater_->inflate(data, kInflatePiece, [&](std::string_view piece) {
    broken = feed_frames(piece, sink, tally);
    return broken.empty();
  });
  return broken.empty() ? not_zlib : broken;
}

std::string AvroSession::feed_frames(std::string_view data, net::MessageSink& sink, net::ReadTally& tally) {
  frames_.clear();
  std::string broken = decoder_.feed(data, frames_);
  for (const Frame& frame : frames_)
    if (std::string why = call(frame, sink, tally); !why.empty()) {
      broken = std::move(why);
      break;
    }
  frames_.clear();  // an idle connection keeps no call's bytes
  return broken;
}

void AvroSession::encode_outgoing(std::string& bytes) {
  if (!deflater_ || bytes.empty()) return;
  std::string compressed;
  deflater_->compress(bytes, compressed);
  bytes = std::move(compressed);
}

void AvroSession::refuse(int32_t serial, std::optional<HandshakeMatch> handshake, const std::string& why,
                         net::ReadTally& tally) {
  ++refused_calls_;
  ++tally.refused;
  tally.refused_why = why;
  acks_->reply_in_order(encode_frame(serial, error_response(handshake, why)));
}

namespace {}  // namespace

std::string AvroSession::call(const Frame& frame, net::MessageSink& sink, net::ReadTally& tally) {
  std::string why;
  const std::optional<CallRequest> request = read_call(frame.message, !handshaken_, why);
  if (!request) return why;  // not even its handshake and name: nothing to answer
  std::optional<HandshakeMatch> match;
  if (request->handshake) {
    match = match_handshake(*request->handshake);
    if (*match == HandshakeMatch::none) {  // the call is not made: the client sends it again, with its text
      // Java's client sends its text after one NONE; a second is not Flume's client.
      if (++unmatched_handshakes_ > 1) return "a protocol this source does not speak (the handshake matched none)";
      acks_->reply_in_order(encode_frame(frame.serial, handshake_response(*match)));
      return {};
    }
    handshaken_ = true;
  }
  if (request->message.empty() && match) {  // a handshake alone (Avro's ping)
    acks_->reply_in_order(encode_frame(frame.serial, handshake_response(*match)));
    return {};
  }
  const bool batch = request->message == "appendBatch";
  if (!batch && request->message != "append") {
    refuse(frame.serial, match, "unknown message " + printable(request->message), tally);
    return {};
  }
  events_.clear();
  // Header names and values an event's header block can hold (event_headers.h): longer ones refused.
  const EventBounds bounds{settings_.max_batch_events, settings_.max_batch_why, kHeaderNameMax, kHeaderValueMax};
  if (!split_events(request->parameters, batch, bounds, events_, why)) {
    refuse(frame.serial, match, why, tally);
    return {};
  }
  ++tally.calls[batch ? kAppendBatch : kAppend];
  const std::string answer = encode_frame(frame.serial, status_response(match, Status::ok));
  if (events_.empty()) {
    acks_->reply_in_order(answer);
    return {};
  }
  // One ticket per event, the answer on the last: it goes out once every one of them is done,
  // FAILED if any of them was not taken (a channel stayed full).
  tally.frames += events_.size();
  sink.begin_call(events_.size());
  const net::AckQueue::Ticket first =
      acks_->expect_run(events_.size(), answer, encode_frame(frame.serial, status_response(match, Status::failed)),
                        batch ? kAppendBatch + 1 : kAppend + 1);
  for (size_t i = 0; i < events_.size(); ++i) sink.message(events_[i], {}, first + i);
  return {};
}

}  // namespace sluice::avro
