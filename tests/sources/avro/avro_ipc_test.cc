// Flume's Avro RPC, byte for byte: the frames, the handshake, a call and its answer, as Avro
// 1.11's Netty transport (Flume 1.11's Avro sink and avro-client) writes and reads them.

#include <catch2/catch.hpp>

#include <openssl/evp.h>

#include <string>
#include <vector>

#include "sources/avro/avro_binary.h"
#include "sources/avro/avro_ipc.h"

using namespace sluice::avro;

namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

std::string md5(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_md5(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

const std::string kHash =
    bytes({0x86, 0xaa, 0xda, 0xe2, 0xc4, 0x54, 0x74, 0xc0, 0xfe, 0x93, 0xff, 0xd0, 0xf2, 0x35, 0x0a, 0x65});

// The event {"host": "h1"} "hello" as Java writes it.
const std::string kEvent = bytes({0x02, 0x08, 'h', 'o', 's', 't', 0x04, 'h', '1', 0x00, 0x0a, 'h', 'e', 'l', 'l', 'o'});

}  // namespace

TEST_CASE("Flume's protocol text hashes to what Flume 1.11's clients name", "[avro]") {
  CHECK(kFlumeProtocol.size() == 1334);
  CHECK(kFlumeProtocolHash == kHash);
  CHECK(md5(kFlumeProtocol) == kHash);
}

TEST_CASE("Avro's zig-zag varints, both ways, and a reader that refuses what is not there", "[avro]") {
  for (const int64_t value : std::initializer_list<int64_t>{0, 1, -1, 63, -64, 64, 1334, INT64_MAX, INT64_MIN}) {
    std::string out;
    BinaryWriter(out).write_long(value);
    BinaryReader in(out);
    CHECK(in.read_long() == value);
    CHECK(in.ok());
    CHECK(in.at_end());
  }
  std::string out;
  BinaryWriter(out).write_long(1334);
  CHECK(out == bytes({0xec, 0x14}));
  const std::string short_string = bytes({0x14, 'a'});  // a string of 10 bytes that has 1
  BinaryReader past(short_string);
  past.read_bytes();
  CHECK_FALSE(past.ok());
  const std::string eleven_bytes(11, '\xff');
  BinaryReader endless(eleven_bytes);
  endless.read_long();
  CHECK_FALSE(endless.ok());
  const std::string big_block = bytes({0x80, 0x80, 0x04});  // a block of 32768 items against a bound of 100
  BinaryReader many(big_block);
  CHECK(many.read_block_count(100) == 0);
  CHECK_FALSE(many.ok());
}

TEST_CASE("a first appendBatch as Flume's sink sends it: frames cut from any pieces, handshake, call, events",
          "[avro]") {
  // REQ 1 of a connection: serial 1, two buffers (handshake + meta + name, then the parameters).
  const std::string head = kHash + bytes({0x00}) + kHash + bytes({0x02, 0x00, 0x00, 0x16}) + "appendBatch";
  const std::string params = bytes({0x02}) + kEvent + bytes({0x00});
  std::string frame = bytes({0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, static_cast<int>(head.size())}) + head +
                      bytes({0, 0, 0, static_cast<int>(params.size())}) + params;
  CHECK(frame.size() == 82);
  FrameDecoder decoder(1 << 20);
  std::vector<Frame> frames;
  for (char c : frame) REQUIRE(decoder.feed(std::string_view(&c, 1), frames).empty());  // byte by byte
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].serial == 1);
  CHECK(decoder.buffered() == 0);
  std::string why;
  const auto call = read_call(frames[0].message, true, why);
  REQUIRE(call);
  REQUIRE(call->handshake);
  CHECK(call->handshake->client_hash == kHash);
  CHECK_FALSE(call->handshake->client_protocol);
  CHECK(match_handshake(*call->handshake) == HandshakeMatch::both);
  CHECK(call->message == "appendBatch");
  std::vector<std::string_view> events;
  REQUIRE(split_events(call->parameters, true, {.max_events = 100}, events, why));
  REQUIRE(events.size() == 1);
  FlumeEventView event;
  REQUIRE(read_event(events[0], event));
  CHECK(event.headers == std::vector<std::pair<std::string_view, std::string_view>>{{"host", "h1"}});
  CHECK(event.body == "hello");
  // What Java's server answers (three buffers; ours is one, and Java reads them joined).
  CHECK(status_response(HandshakeMatch::both, Status::ok) == bytes({0, 0, 0, 0, 0, 0, 0}));
  CHECK(encode_frame(1, status_response(std::nullopt, Status::failed)) ==
        bytes({0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 2}));
  // Our own client writes the same request.
  CHECK(append_batch_request({kEvent}, true, false) == head + params);
  CHECK(encode_event({{"host", "h1"}}, "hello") == kEvent);
}

TEST_CASE("a handshake that names another protocol is answered NONE with ours, or CLIENT with Flume's text", "[avro]") {
  const std::string other_hash(16, 'x'), another_hash(16, 'y');
  HandshakeRequest unknown{other_hash, std::nullopt, kHash};
  CHECK(match_handshake(unknown) == HandshakeMatch::none);
  const std::string none = handshake_response(HandshakeMatch::none);
  std::string why;
  const auto read = read_response(none, true, why);
  REQUIRE(read);
  CHECK(read->handshake == HandshakeMatch::none);
  CHECK_FALSE(read->status);
  CHECK(none.find(std::string(kFlumeProtocol)) != std::string::npos);
  HandshakeRequest with_text{other_hash, kFlumeProtocol, another_hash};
  CHECK(match_handshake(with_text) == HandshakeMatch::client);
  const auto answered = read_response(status_response(HandshakeMatch::client, Status::ok), true, why);
  REQUIRE(answered);
  CHECK(answered->status == Status::ok);
}

TEST_CASE("hostile frames and calls are refused with a reason, never read past their end", "[avro]") {
  std::vector<Frame> frames;
  CHECK_THAT(FrameDecoder(1024).feed(bytes({0, 0, 0, 1, 0, 0, 0, 0}), frames), Catch::Contains("0 buffers"));
  CHECK_THAT(FrameDecoder(1024).feed(bytes({0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff}), frames), Catch::Contains("buffers"));
  CHECK_THAT(FrameDecoder(1024).feed(bytes({0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 8, 0}), frames),
             Catch::Contains("more than 1024 bytes"));
  CHECK(frames.empty());
  std::string why;
  CHECK_FALSE(read_call(bytes({0x00, 0x7f}), false, why));  // a name longer than the message
  CHECK_THAT(why, Catch::Contains("not an Avro request"));
  std::vector<std::string_view> events;
  CHECK_FALSE(split_events(bytes({0x02}) + kEvent + bytes({0x00, 0x00}), true, {.max_events = 10}, events,
                           why));  // a byte after
  CHECK_FALSE(
      split_events(bytes({0x06}) + kEvent + kEvent + kEvent + bytes({0x00}), true, {.max_events = 2}, events, why));
  CHECK_THAT(why, Catch::Contains("more"));
  // A negative block count (with its byte size) is a block as good as any.
  events.clear();
  CHECK(split_events(bytes({0x01, static_cast<int>(kEvent.size() * 2)}) + kEvent + bytes({0x00}), true,
                     {.max_events = 10}, events, why));
  CHECK(events.size() == 1);
}
