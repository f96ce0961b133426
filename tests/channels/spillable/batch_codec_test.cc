#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "channels/spillable/batch_codec.h"

using namespace sluice;
using namespace sluice::spill;

TEST_CASE("a batch survives encoding with its fields header names and composed bodies", "[spill]") {
  EventBatchBuilder builder;
  builder.set_header_names(std::make_shared<HeaderNames>(HeaderNames{"port", "ip", ""}));
  for (int i = 0; i < 3; ++i) {
    const std::string line = "<13>Nov 30 11:07:0" + std::to_string(i) + " h app: message " + std::to_string(i);
    EventRecord& e = builder.append(line);
    e.host = {20, 1};
    e.facility = 1;
    e.timestamp_ms = 1000 + i;
    e.port = 5140;
    e.body_offset = builder.append_to_last("composed " + std::to_string(i));
    e.body_length = 10;
    e.client_offset = builder.append_to_last("10.0.0.1");
    e.client_ip_length = 8;
  }
  EventBatch batch = builder.seal();
  const EventBatch slice = batch.slice(1, 2);  // a slice of a bigger storage is rebased
  std::string encoded;
  encode_batch(slice, encoded);
  const auto decoded = decode_batch(encoded);
  REQUIRE(decoded);
  REQUIRE(decoded->size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const EventRecord& a = slice[i];
    const EventRecord& b = (*decoded)[i];
    CHECK(decoded->raw(b) == slice.raw(a));
    CHECK(decoded->body(b) == slice.body(a));
    CHECK(decoded->client_ip(b) == "10.0.0.1");
    CHECK(decoded->text(b, b.host) == "h");
    CHECK(b.timestamp_ms == a.timestamp_ms);
  }
  REQUIRE(decoded->header_names());
  CHECK(decoded->header_names()->client_ip == "ip");
  CHECK(decoded->bytes() == slice.bytes());
  CHECK_FALSE(decode_batch(encoded.substr(0, encoded.size() / 2)));
  CHECK_FALSE(decode_batch("not snappy at all"));
}

TEST_CASE("headers an interceptor set survive encoding, removals included, and only the events that have them",
          "[spill][headers]") {
  EventBatchBuilder builder;
  for (int i = 0; i < 4; ++i) {
    EventRecord& e = builder.append("<13>Nov 30 11:07:00 h app: message " + std::to_string(i));
    e.host = {20, 1};
    if (i % 2 == 1) continue;  // events 1 and 3 have no headers
    HeaderWriter headers;
    headers.set("datacenter", "ams" + std::to_string(i));
    headers.remove("host");
    builder.set_last_headers(headers.block());
  }
  const EventBatch batch = builder.seal();
  std::string encoded;
  encode_batch(batch.slice(0, 3), encoded);  // the last event's block is past this slice's records
  const auto decoded = decode_batch(encoded);
  REQUIRE(decoded);
  REQUIRE(decoded->size() == 3);
  char scratch[24];
  for (size_t i = 0; i < 3; ++i) {
    const EventRecord& e = (*decoded)[i];
    CHECK(decoded->raw(e) == batch.raw(batch[i]));
    if (i % 2 == 1) {
      CHECK(decoded->header_block(e).empty());
      CHECK(decoded->header(e, "host", scratch) == std::optional<std::string_view>("h"));
      CHECK_FALSE(decoded->header(e, "datacenter", scratch));
    } else {
      CHECK(decoded->header(e, "datacenter", scratch) == std::optional<std::string_view>("ams" + std::to_string(i)));
      CHECK_FALSE(decoded->header(e, "host", scratch));  // removed: the parsed field is hidden
    }
  }
  CHECK(decoded->bytes() == batch.slice(0, 3).bytes());
}
