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

namespace {

// At most 64 bytes of what a sender named, its control bytes as '?': for an answer and a log line.
std::string printable(std::string_view text) {
  std::string out(text.substr(0, 64));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text.size() > 64 ? out + "..." : out;
}

// A header an event's header block cannot hold as it is (event_headers.h), or "".
std::string oversized_header(std::string_view event_bytes) {
  FlumeEventView event;
  if (!read_event(event_bytes, event)) return "an event that is not an AvroFlumeEvent";
  for (const auto& [name, value] : event.headers) {
    if (name.size() > kHeaderNameMax)
      return "a header name of " + std::to_string(name.size()) + " bytes (at most " + std::to_string(kHeaderNameMax) +
             " are kept)";
    if (value.size() > kHeaderValueMax)
      return "header " + printable(name) + " of " + std::to_string(value.size()) + " bytes (at most " +
             std::to_string(kHeaderValueMax) + " are kept)";
  }
  return {};
}

}  // namespace

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
  if (!split_events(request->parameters, batch, settings_.max_batch_events, events_, why)) {
    refuse(frame.serial, match, why, tally);
    return {};
  }
  for (const std::string_view event : events_)
    if (std::string too_long = oversized_header(event); !too_long.empty()) {
      refuse(frame.serial, match, too_long, tally);
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
  for (size_t i = 0; i + 1 < events_.size(); ++i) sink.message(events_[i], false, acks_->expect({}));
  const net::AckQueue::Ticket last =
      acks_->expect(answer, encode_frame(frame.serial, status_response(match, Status::failed)),
                    batch ? kAppendBatch + 1 : kAppend + 1);
  sink.message(events_.back(), false, last);
  return {};
}

}  // namespace sluice::avro
