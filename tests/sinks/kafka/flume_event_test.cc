// Flume's Avro event (AvroFlumeEvent: map<string> headers, bytes body) in Avro's binary encoding.

#include <catch2/catch.hpp>

#include "sinks/kafka/flume_event.h"

using namespace sluice::kafka;

TEST_CASE("Flume's Avro event is Avro's binary encoding of its headers and body", "[kafka][avro]") {
  std::string out;
  append_flume_event({{"host", "web01"}, {"Severity", "5"}}, "hello", out);
  // count 2 (zig-zag: 4), "host" (len 4: 8) "web01" (len 5: 10), "Severity" (16) "5" (2), end 0, body len 5 (10).
  const std::string expected = std::string(
                                   "\x04\x08host\x0aweb01\x10Severity\x02"
                                   "5",
                                   23) +
                               std::string(1, '\0') + "\x0ahello";
  CHECK(out == expected);
  const auto back = parse_flume_event(out);
  REQUIRE(back);
  CHECK(back->headers == FlumeHeaders{{"host", "web01"}, {"Severity", "5"}});
  CHECK(back->body == "hello");

  std::string bare;
  append_flume_event({}, std::string(200, 'x'), bare);  // no headers: the empty map; a two-byte length
  CHECK(bare.substr(0, 3) == std::string("\x00\x90\x03", 3));
  CHECK(parse_flume_event(bare)->body == std::string(200, 'x'));
  CHECK_FALSE(parse_flume_event(out.substr(0, out.size() - 1)));
  CHECK_FALSE(parse_flume_event(out + "x"));
}
