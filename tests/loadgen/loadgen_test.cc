#include <catch2/catch.hpp>

#include "loadgen/event_template.h"
#include "loadgen/sender.h"
#include "loadgen/verifier.h"

using namespace sluice::loadgen;

TEST_CASE("every generated event is exactly --size bytes and carries its connection and sequence", "[loadgen]") {
  for (size_t size : {minimum_event_size(), size_t{120}, size_t{121}, size_t{500}}) {
    INFO("size " << size);
    EventWriter writer(size, 42, 998);
    std::string out;
    writer.write(out, 5);
    REQUIRE(out.size() == 5 * size);
    for (size_t i = 0; i < 5; ++i) {
      const std::string_view event = std::string_view(out).substr(i * size, size);
      CHECK(event.back() == '\n');
      CHECK(event.find('\n') == size - 1);
      const auto id = parse_event_id(event);
      REQUIRE(id);
      CHECK(id->connection == 42);
      CHECK(id->sequence == 998 + i);
    }
  }
  CHECK_THROWS_AS(EventWriter(minimum_event_size() - 1, 0), std::invalid_argument);
}

TEST_CASE("the verifier detects loss and duplication and reordering", "[loadgen][verifier]") {
  auto event = [](uint32_t conn, uint64_t seq) {
    EventWriter w(120, conn, seq);
    std::string out;
    w.write(out, 1);
    return out;
  };
  Verifier v(std::map<uint32_t, uint64_t>{{0, 10}, {1, 3}});
  for (uint64_t s = 0; s < 10; ++s)
    if (s != 4 && s != 5) v.add(0, -1, event(0, s));
  v.add(1, -1, event(1, 0));
  v.add(1, -1, event(1, 2));
  v.add(1, -1, event(1, 1));  // after 2 on the same partition: reordered
  v.add(1, -1, event(1, 1));  // twice: duplicated
  v.add(2, -1, "not ours");
  const Verdict verdict = v.finish();
  CHECK(verdict.missing == 2);
  CHECK(verdict.connections.at(0).missing_ranges == std::vector<std::pair<uint64_t, uint64_t>>{{4, 5}});
  CHECK(verdict.duplicates == 1);
  CHECK(verdict.reordered == 2);
  CHECK(verdict.unrecognised == 1);
  CHECK_FALSE(verdict.ok());

  Verifier clean(std::map<uint32_t, uint64_t>{{7, 3}});
  for (uint64_t s = 0; s < 3; ++s) clean.add(0, -1, event(7, s));
  CHECK(clean.finish().ok());

  Verifier tail_lost(std::map<uint32_t, uint64_t>{{7, 3}});
  tail_lost.add(0, -1, event(7, 0));
  CHECK(tail_lost.finish().missing == 2);  // the sender's summary makes a lost tail visible
}

TEST_CASE("targets parse as host:port", "[loadgen]") {
  CHECK(parse_target("127.0.0.1:5140").port == 5140);
  CHECK(parse_target("[::1]:7000").host == "::1");
  CHECK_THROWS(parse_target("localhost"));
  CHECK_THROWS(parse_target("localhost:0"));
}
