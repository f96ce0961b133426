#include "sources/avro/avro_session.h"

#include "agent/api/event_headers.h"

namespace sluice::avro {

AvroSession::AvroSession(const AvroSettings& settings, std::shared_ptr<net::AckWaker> waker)
    : settings_(settings),
      decoder_(settings.max_frame_bytes),
      acks_(std::make_shared<net::AckQueue>(std::move(waker))) {}

std::string AvroSession::feed(std::string_view data, net::MessageSink& sink, net::ReadTally& tally) {
  frames_.clear();
  const std::string broken = decoder_.feed(data, frames_);
  for (const Frame& frame : frames_)
    if (std::string why = call(frame, sink, tally); !why.empty()) return why;
  return broken;
}

void AvroSession::refuse(int32_t serial, std::optional<HandshakeMatch> handshake, const std::string& why,
                         net::ReadTally& tally) {
  ++refused_calls_;
  ++tally.refused;
  tally.refused_why = why;
  acks_->reply_in_order(encode_frame(serial, error_response(handshake, why)));
}

namespace {

// A header an event's header block cannot hold as it is (event_headers.h), or "".
std::string oversized_header(std::string_view event_bytes) {
  FlumeEventView event;
  if (!read_event(event_bytes, event)) return "an event that is not an AvroFlumeEvent";
  for (const auto& [name, value] : event.headers) {
    if (name.empty() || name.size() > kHeaderNameMax)
      return "a header name of " + std::to_string(name.size()) + " bytes (1 to " + std::to_string(kHeaderNameMax) +
             " are kept)";
    if (value.size() > kHeaderValueMax)
      return "header " + std::string(name) + " of " + std::to_string(value.size()) + " bytes (at most " +
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
    refuse(frame.serial, match, "unknown message " + std::string(request->message), tally);
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
  const std::string answer = encode_frame(frame.serial, status_response(match, Status::ok));
  if (events_.empty()) {
    acks_->reply_in_order(answer);
    return {};
  }
  // One ticket per event, the answer on the last: it goes out once every one of them is done.
  tally.frames += events_.size();
  for (size_t i = 0; i < events_.size(); ++i) {
    const net::AckQueue::Ticket ticket = acks_->expect(i + 1 == events_.size() ? answer : std::string());
    sink.message(events_[i], false, ticket);
  }
  return {};
}

}  // namespace sluice::avro
