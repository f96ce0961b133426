// type = avro in-process: a client of our own speaking Flume's Avro RPC as Flume's Avro sink does
// (appendBatch on one connection, the handshake on the first call), answered only once the
// channel's sink has taken and committed the events.

#include <poll.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "sources/avro/avro_ipc.h"
#include "sources/net/stream_server.h"
#include "tests/support/avro_source.h"
#include "tests/support/channel_contents.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

using test::AvroSource;

// Flume's sink's side of a connection: one call at a time, each answer read whole.
class AvroCaller {
 public:
  explicit AvroCaller(uint16_t port) : fd_(test::connect_loopback(port)) {}
  ~AvroCaller() { ::close(fd_); }
  void send_raw(const std::string& bytes) {
    REQUIRE(::write(fd_, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  }
  // True once the source has closed the connection (what it sent before is read and dropped).
  bool closed_within(std::chrono::milliseconds wait) {
    const auto deadline = Clock::now() + wait;
    while (Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[4096];
      if (::read(fd_, buf, sizeof buf) <= 0) return true;
    }
    return false;
  }
  void call(const std::vector<std::string>& events) {
    ++serial_;
    const std::string frame = avro::encode_frame(serial_, avro::append_batch_request(events, serial_ == 1, false));
    REQUIRE(::write(fd_, frame.data(), frame.size()) == static_cast<ssize_t>(frame.size()));
  }
  // The next answer, if one comes within `wait`.
  std::optional<avro::CallResponse> answer(std::chrono::milliseconds wait) {
    const auto deadline = Clock::now() + wait;
    std::vector<avro::Frame> frames;
    while (frames.empty() && Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      REQUIRE(decoder_.feed(std::string_view(buf, static_cast<size_t>(n)), frames).empty());
    }
    if (frames.empty()) return std::nullopt;
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].serial == serial_);
    std::string why;
    auto response = avro::read_response(frames[0].message, !answered_, why);
    answered_ = true;
    INFO(why);
    REQUIRE(response);
    return response;
  }

 private:
  int fd_;
  int32_t serial_ = 0;
  bool answered_ = false;
  avro::FrameDecoder decoder_{1 << 20};
};

}  // namespace

TEST_CASE("an Avro call is answered OK only once its events are committed, with their headers and bodies",
          "[avro][source]") {
  AvroSource s;
  AvroCaller client(s.port());
  client.call({avro::encode_event({{"host", "web01"}, {"topic", "logs"}}, "first"), avro::encode_event({}, "second")});
  REQUIRE(test::eventually([&] { return s.channel.counters().events_held == 2; }, 10s));
  CHECK_FALSE(client.answer(300ms));  // in the channel, not delivered: no answer yet
  const Take take = s.channel.take(10, Clock::now() + 1s);
  REQUIRE(take.events == 2);
  char scratch[24];
  const EventBatch& batch = take.batches.at(0);
  CHECK(batch.kind() == EventKind::plain);
  CHECK(batch.body(batch[0]) == "first");
  CHECK(batch.header(batch[0], HeaderRef("host"), scratch) == "web01");
  CHECK(batch.header(batch[0], HeaderRef("topic"), scratch) == "logs");
  CHECK_FALSE(batch.header(batch[1], HeaderRef("Severity"), scratch));  // nothing parsed
  CHECK(batch.header(batch[1], HeaderRef("timestamp"), scratch) == std::nullopt);
  s.channel.commit(take);
  const auto answer = client.answer(10s);
  REQUIRE(answer);
  CHECK(answer->handshake == avro::HandshakeMatch::both);
  CHECK(answer->status == avro::Status::ok);
  // The next call on the connection: no handshake either way.
  client.call({avro::encode_event({}, "third")});
  REQUIRE(test::eventually([&] { return s.channel.counters().events_held == 1; }, 10s));
  test::take_all_bodies(s.channel);
  const auto second = client.answer(10s);
  REQUIRE(second);
  CHECK(second->status == avro::Status::ok);
}

TEST_CASE("Flume's property names configure the Avro source, what it does not take is refused", "[avro][source]") {
  using Properties = AvroSource::Properties;
  CHECK_NOTHROW(AvroSource(Properties{{"threads", "4"}, {"compression-type", "none"}}));
  CHECK_NOTHROW(AvroSource(Properties{{"compression-type", "deflate"}}));
  CHECK_THROWS_WITH(AvroSource(Properties{{"compression-type", "deflate"}, {"ssl", "true"}}),
                    Catch::Contains("compression-type"));
  CHECK_THROWS_WITH(AvroSource(Properties{{"ackAfter", "channel"}}), Catch::Contains("file channel"));
}

TEST_CASE("ipFilterRules: a client they deny is closed at connect, one they allow is answered", "[avro][source]") {
  using Properties = AvroSource::Properties;
  SECTION("denied") {
    AvroSource s(Properties{{"ipFilter", "true"}, {"ipFilterRules", "allow:ip:10.*,deny:ip:127.*"}});
    AvroCaller client(s.port());
    client.call({avro::encode_event({}, "refused")});
    CHECK_FALSE(client.answer(5s));  // closed, unanswered
    CHECK(s.channel.counters().events_put == 0);
  }
  SECTION("allowed by the user guide's example") {
    AvroSource s(Properties{{"ipFilter", "true"}, {"ipFilterRules", "allow:ip:127.*,allow:name:localhost,deny:ip:*"}});
    AvroCaller client(s.port());
    client.call({avro::encode_event({}, "in")});
    REQUIRE(test::eventually([&] { return s.channel.counters().events_held == 1; }, 10s));
    test::take_all_bodies(s.channel);
    const auto answer = client.answer(10s);
    REQUIRE(answer);
    CHECK(answer->status == avro::Status::ok);
  }
  CHECK_THROWS_WITH(AvroSource(Properties{{"ipFilter", "true"}}), Catch::Contains("ipFilterRules"));
  CHECK_THROWS_WITH(AvroSource(Properties{{"ipFilterRules", "deny:ip:*"}}), Catch::Contains("ipFilter"));
  CHECK_THROWS_WITH(AvroSource(Properties{{"ipFilter", "true"}, {"ipFilterRules", "allow:name:*.corp"}}),
                    Catch::Contains("reverse lookup"));
}

TEST_CASE(
    "a connection that sends garbage, a giant buffer count or an unknown protocol twice is ended, counted, and "
    "the others go on",
    "[avro][source]") {
  AvroSource s;
  AvroCaller good(s.port());
  good.call({avro::encode_event({}, "before")});
  REQUIRE(test::eventually([&] { return s.channel.counters().events_held == 1; }, 10s));
  test::take_all_bodies(s.channel);
  const auto before = good.answer(10s);
  REQUIRE(before);
  CHECK(before->status == avro::Status::ok);
  std::string unknown = avro::append_batch_request({avro::encode_event({}, "x")}, true, false);
  unknown.replace(0, 16, std::string(16, 'z'));  // a protocol hash that is not Flume's
  const std::vector<std::string> hostile{std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
                                         std::string("\0\0\0\1\x7f\xff\xff\xff", 8),  // serial 1, 2^31 - 1 buffers
                                         avro::encode_frame(1, unknown) + avro::encode_frame(2, unknown)};
  for (const std::string& bytes : hostile) {
    AvroCaller bad(s.port());
    bad.send_raw(bytes);
    CHECK(bad.closed_within(10s));  // ended by the source (the unknown hash: after one NONE)
  }
  REQUIRE(test::eventually([&] { return s.source->counters().events_received == 1; }, 5s));
  good.call({avro::encode_event({}, "after")});
  REQUIRE(test::eventually([&] { return s.channel.counters().events_held == 1; }, 10s));
  test::take_all_bodies(s.channel);
  const auto after = good.answer(10s);
  REQUIRE(after);
  CHECK(after->status == avro::Status::ok);
}

TEST_CASE(
    "a call goes into its channel in one put, whatever batchSize, and one over a channel's transactionCapacity "
    "is refused with the reason",
    "[avro][source]") {
  using Properties = AvroSource::Properties;
  std::vector<std::string> events;
  for (int i = 0; i < 50; ++i) events.push_back(avro::encode_event({}, "e" + std::to_string(i)));
  {
    AvroSource s(Properties{{"batchSize", "10"}});
    AvroCaller client(s.port());
    client.call(events);
    REQUIRE(test::eventually([&] { return s.channel.counters().events_held == 50; }, 10s));
    const Take take = s.channel.take(1000, Clock::now() + 1s);
    CHECK(take.batches.size() == 1);  // one put: all of it, or none
    CHECK(take.events == 50);
    s.channel.commit(take);
    const auto answer = client.answer(10s);
    REQUIRE(answer);
    CHECK(answer->status == avro::Status::ok);
  }
  AvroSource small(Properties{{"batchSize", "10"}}, 30);  // transactionCapacity 30
  AvroCaller client(small.port());
  client.call(events);
  const auto answer = client.answer(10s);
  REQUIRE(answer);
  CHECK_FALSE(answer->status);
  CHECK_THAT(answer->error, Catch::Contains("transactionCapacity (30) of channel 'c'"));
  CHECK(small.channel.counters().events_put == 0);
}
