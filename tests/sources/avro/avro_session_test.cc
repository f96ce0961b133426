// An Avro source's connection: the handshake on the first call only, each event of a call a
// message, the call answered once all of its events are done, in order; what a Flume sender
// does not send refused with an error, the connection going on.

#include <catch2/catch.hpp>

#include <vector>

#include "sources/avro/avro_session.h"

#include <zlib.h>

using namespace sluice::avro;
using sluice::net::AckQueue;
using sluice::net::AckWaker;

namespace {

struct Connection : sluice::net::MessageSink {
  std::shared_ptr<AckWaker> waker = std::make_shared<AckWaker>(nullptr);  // no loop: nothing to wake
  AvroSession session;
  std::vector<std::pair<std::string, AckQueue::Ticket>> messages;
  sluice::net::ReadTally tally;
  int32_t serial = 0;
  std::unique_ptr<DeflateStream> deflater;  // compression-type = deflate: as a Flume sender's
  std::unique_ptr<InflateStream> inflater;

  explicit Connection(bool deflate = false)
      : session(AvroSettings{.max_frame_bytes = 64 * 1024, .max_batch_events = 10, .deflate = deflate}, waker) {
    if (deflate) {
      deflater = std::make_unique<DeflateStream>(6);
      inflater = std::make_unique<InflateStream>();
    }
  }
  void message(std::string_view m, sluice::pipeline::MessageTraits, AckQueue::Ticket t) override {
    messages.emplace_back(std::string(m), t);
  }
  // One call's frame as the sender puts it on the wire (compressed with deflate).
  std::string wire(const std::string& request) {
    std::string bytes = encode_frame(++serial, request);
    if (!deflater) return bytes;
    std::string compressed;
    deflater->compress(bytes, compressed);
    return compressed;
  }
  std::string send(const std::string& request) { return session.feed(wire(request), *this, tally); }
  // The answers ready, each read as a client reads it (the first with its handshake answer).
  std::vector<CallResponse> answers(bool first_with_handshake = false) {
    uint64_t events = 0;
    std::string bytes = session.acks()->take_ready(events);
    session.encode_outgoing(bytes);  // as the io worker sends them
    if (inflater) {
      std::string inflated;
      REQUIRE(inflater
                  ->inflate(bytes, 1024,
                            [&](std::string_view piece) {
                              inflated += piece;
                              return true;
                            })
                  .empty());
      bytes = inflated;
    }
    FrameDecoder decoder(1 << 20);
    std::vector<Frame> frames;
    REQUIRE(decoder.feed(bytes, frames).empty());
    std::vector<CallResponse> out;
    for (size_t i = 0; i < frames.size(); ++i) {
      std::string why;
      const auto response = read_response(frames[i].message, first_with_handshake && i == 0, why);
      INFO(why);
      REQUIRE(response);
      out.push_back(*response);
    }
    return out;
  }
  void done_all() {
    for (const auto& [m, ticket] : messages) session.acks()->done(ticket, 1);
    messages.clear();
  }
};

std::vector<std::string> events(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(encode_event({{"n", std::to_string(i)}}, "body " + std::to_string(i)));
  return out;
}

}  // namespace

TEST_CASE("a batch is answered OK once its every event is done, the handshake on the first call only",
          "[avro][session]") {
  Connection c;
  REQUIRE(c.send(append_batch_request(events(3), true, false)).empty());
  REQUIRE(c.messages.size() == 3);
  FlumeEventView event;
  REQUIRE(read_event(c.messages[1].first, event));
  CHECK(event.body == "body 1");
  CHECK(c.tally.frames == 3);
  c.session.acks()->done(c.messages[0].second, 1);
  c.session.acks()->done(c.messages[2].second, 1);
  CHECK(c.answers(true).empty());  // the second still waits
  c.session.acks()->done(c.messages[1].second, 1);
  const auto first = c.answers(true);
  REQUIRE(first.size() == 1);
  CHECK(first[0].handshake == HandshakeMatch::both);
  CHECK(first[0].status == Status::ok);
  c.messages.clear();
  // The next call carries no handshake, and neither does its answer.
  REQUIRE(c.send(append_batch_request(events(2), false, false)).empty());
  c.done_all();
  const auto second = c.answers();
  REQUIRE(second.size() == 1);
  CHECK(second[0].status == Status::ok);
}

TEST_CASE("an unknown protocol hash is answered NONE and the call not made, the client's text then matches",
          "[avro][session]") {
  Connection c;
  std::string request = append_batch_request(events(1), true, false);
  request.replace(0, 16, std::string(16, 'z'));  // a client hash we do not know
  REQUIRE(c.send(request).empty());
  CHECK(c.messages.empty());
  const auto none = c.answers(true);
  REQUIRE(none.size() == 1);
  CHECK(none[0].handshake == HandshakeMatch::none);
  std::string again = append_batch_request(events(1), true, true);  // with its protocol's text
  again.replace(0, 16, std::string(16, 'z'));
  REQUIRE(c.send(again).empty());
  CHECK(c.messages.size() == 1);
  c.done_all();
  const auto answered = c.answers(true);
  REQUIRE(answered.size() == 1);
  CHECK(answered[0].handshake == HandshakeMatch::both);  // it named our hash as the server's
  CHECK(answered[0].status == Status::ok);
}

TEST_CASE(
    "an empty batch is answered at once, too many events or too long a header is refused, the connection "
    "going on",
    "[avro][session]") {
  Connection c;
  REQUIRE(c.send(append_batch_request({}, true, false)).empty());
  auto answers = c.answers(true);
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].status == Status::ok);
  REQUIRE(c.send(append_batch_request(events(11), false, false)).empty());  // maxBatchEvents is 10
  REQUIRE(c.send(append_batch_request({encode_event({{std::string(300, 'h'), "v"}}, "b")}, false, false)).empty());
  REQUIRE(c.send(append_batch_request(events(2), false, false)).empty());
  CHECK(c.messages.size() == 2);  // only the last call's
  c.done_all();
  answers = c.answers();
  REQUIRE(answers.size() == 3);
  CHECK_FALSE(answers[0].status);
  CHECK_THAT(answers[0].error, Catch::Contains("more events than maxBatchEvents"));
  CHECK_THAT(answers[1].error, Catch::Contains("a header name of 300 bytes"));
  CHECK(answers[2].status == Status::ok);
  CHECK(c.session.refused_calls() == 2);
  CHECK(c.tally.refused == 2);  // counted by the source (protocol errors), the last reason logged
  CHECK_THAT(c.tally.refused_why, Catch::Contains("header name"));
}

TEST_CASE("answers leave in the order of the calls, whatever order their events are done in", "[avro][session]") {
  Connection c;
  REQUIRE(c.send(append_batch_request(events(1), true, false)).empty());
  REQUIRE(c.send(append_batch_request(events(1), false, false)).empty());
  REQUIRE(c.messages.size() == 2);
  c.session.acks()->done(c.messages[1].second, 1);  // the second call's event first
  CHECK(c.answers(true).empty());
  c.session.acks()->done(c.messages[0].second, 1);
  CHECK(c.answers(true).size() == 2);
}

TEST_CASE("a frame past maxFrameSize ends the connection", "[avro][session]") {
  Connection c;
  std::vector<std::string> big{encode_event({}, std::string(70 * 1024, 'x'))};
  CHECK_THAT(c.send(append_batch_request(big, true, false)), Catch::Contains("maxFrameSize"));
  CHECK(c.messages.empty());
}

TEST_CASE(
    "what only a hostile client sends: a second unknown handshake ends the connection, an event's "
    "headers past 1,024 and a message's name are bounded",
    "[avro][session]") {
  Connection c;
  std::string unknown = append_batch_request(events(1), true, false);
  unknown.replace(0, 16, std::string(16, 'z'));
  REQUIRE(c.send(unknown).empty());                                // NONE: Flume's client sends its text next
  CHECK_THAT(c.send(unknown), Catch::Contains("does not speak"));  // a second NONE: not Flume's client
  Connection d;
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 1025; ++i) many.emplace_back("h" + std::to_string(i), "v");
  REQUIRE(d.send(append_batch_request({encode_event(many, "b")}, true, false)).empty());
  many.resize(1023);
  many.emplace_back("", "an empty name is Flume's too");  // 1,024 in all
  REQUIRE(d.send(append_batch_request({encode_event(many, "b")}, false, false)).empty());
  CHECK(d.messages.size() == 1);  // 1,024 headers taken, 1,025 refused
  std::string odd = append_batch_request({}, false, false);
  odd.replace(odd.find("appendBatch"), 11, "append\nEvil");  // the same length: a name with a line end
  REQUIRE(d.send(odd).empty());
  d.done_all();
  const auto answers = d.answers(true);
  REQUIRE(answers.size() == 3);
  CHECK_FALSE(answers[0].status);
  INFO(answers[1].error);
  CHECK(answers[1].status == Status::ok);
  CHECK_THAT(answers[2].error, Catch::Contains("unknown message append?Evil"));
}

TEST_CASE("deflate: calls read through zlib in any pieces, answers compressed as they leave, a plain stream refused",
          "[avro][session]") {
  Connection c(true);
  std::string stream = c.wire(append_batch_request(events(2), true, false));
  stream += c.wire(append_batch_request(events(1), false, false));  // after: one zlib stream, in order
  for (size_t at = 0; at < stream.size(); at += 3) {                // three bytes at a time
    const std::string broken = c.session.feed(std::string_view(stream).substr(at, 3), c, c.tally);
    INFO("at " << at << ": " << broken);
    REQUIRE(broken.empty());
  }
  REQUIRE(c.messages.size() == 3);
  c.done_all();
  const auto answers = c.answers(true);
  REQUIRE(answers.size() == 2);
  CHECK(answers[0].status == Status::ok);
  CHECK(answers[1].status == Status::ok);
  // A frame over maxFrameSize is refused as it inflates: 1 MiB of zeros is a few KiB compressed.
  Connection bomb(true);
  CHECK_THAT(bomb.send(append_batch_request({encode_event({}, std::string(1 << 20, '\0'))}, true, false)),
             Catch::Contains("maxFrameSize"));
  CHECK(bomb.messages.empty());
  Connection plain(true);
  CHECK_THAT(plain.session.feed(encode_frame(1, append_batch_request(events(1), true, false)), plain, plain.tally),
             Catch::Contains("zlib"));
}

TEST_CASE("a call any of whose events was not taken is answered FAILED, the next one OK, each counted by its kind",
          "[avro][session]") {
  Connection c;
  REQUIRE(c.send(append_batch_request(events(3), true, false)).empty());
  REQUIRE(c.send(append_batch_request(events(1), false, false)).empty());
  REQUIRE(c.messages.size() == 4);
  CHECK(c.tally.calls[1] == 2);  // two appendBatch calls received
  c.session.acks()->done(c.messages[0].second, 1);
  c.session.acks()->failed(c.messages[1].second, 1);  // a channel stayed full for this one
  c.session.acks()->done(c.messages[2].second, 2);
  const auto answers = c.answers(true);
  REQUIRE(answers.size() == 2);
  CHECK(answers[0].status == Status::failed);
  CHECK(answers[1].status == Status::ok);
}

TEST_CASE("a sender that disconnects mid-frame: the partial call is neither made nor answered", "[avro][session]") {
  Connection c;
  const std::string frame = c.wire(append_batch_request(events(2), true, false));
  REQUIRE(c.session.feed(std::string_view(frame).substr(0, frame.size() / 2), c, c.tally).empty());
  c.session.finish(true, c, c.tally);
  CHECK(c.messages.empty());
  CHECK(c.answers().empty());
}
