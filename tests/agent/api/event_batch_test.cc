// EventBatch and its builder: events share one buffer, and slices share it without copying.

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "agent/api/event_batch.h"

using namespace sluice;

namespace {

EventBatch batch_of_frames(const std::vector<std::string>& frames) {
  EventBatchBuilder builder;
  for (const std::string& f : frames) builder.append(f);
  return builder.seal();
}

std::vector<std::string> raws(const EventBatch& batch) {
  std::vector<std::string> out;
  for (const EventRecord& e : batch) out.emplace_back(batch.raw(e));
  return out;
}

}  // namespace

TEST_CASE("a sealed batch holds every appended frame, counts their bytes, and the builder starts empty",
          "[event_batch]") {
  EventBatchBuilder builder;
  builder.append("<13>one");
  builder.append("<14>two two");
  CHECK(builder.size() == 2);
  CHECK(builder.bytes() == 7 + 11);
  EventBatch batch = builder.seal();
  CHECK(builder.empty());
  CHECK(builder.bytes() == 0);
  CHECK(batch.size() == 2);
  CHECK(batch.bytes() == 18);
  CHECK(raws(batch) == std::vector<std::string>{"<13>one", "<14>two two"});
  CHECK(batch.body(batch[1]) == "<14>two two");  // until a parser narrows it
  EventBatch next = builder.seal();
  CHECK(next.empty());
}

TEST_CASE("split_front and slice cut a batch into parts that share its storage and keep their bytes right",
          "[event_batch]") {
  EventBatch batch = batch_of_frames({"a", "bb", "ccc", "dddd", "eeeee"});
  const EventStorage* storage = batch.storage();
  EventBatch front = batch.split_front(2);
  CHECK(raws(front) == std::vector<std::string>{"a", "bb"});
  CHECK(front.bytes() == 3);
  CHECK(front.first() == 0);
  CHECK(raws(batch) == std::vector<std::string>{"ccc", "dddd", "eeeee"});
  CHECK(batch.bytes() == 12);
  CHECK(batch.first() == 2);
  CHECK(front.storage() == storage);
  CHECK(batch.storage() == storage);

  EventBatch middle = batch.slice(1, 1);
  CHECK(raws(middle) == std::vector<std::string>{"dddd"});
  CHECK(middle.first() == 3);
  CHECK(middle.bytes() == 4);
  CHECK(batch.slice(2, 100).size() == 1);  // clamped to what is there
  CHECK(batch.slice(7, 1).empty());

  EventBatch all = batch.split_front(10);  // more than it has: all of it, and it is left empty
  CHECK(all.size() == 3);
  CHECK(batch.empty());
  CHECK(batch.bytes() == 0);
}

TEST_CASE("a moved-from batch is empty", "[event_batch]") {
  EventBatch batch = batch_of_frames({"x", "y"});
  EventBatch moved = std::move(batch);
  CHECK(moved.size() == 2);
  CHECK(batch.empty());  // NOLINT(bugprone-use-after-move): what the move promises
  CHECK(batch.bytes() == 0);
}

TEST_CASE("fields read from the frame, the client's address after it, and numbers formatted", "[event_batch]") {
  EventBatchBuilder builder;
  EventRecord& e = builder.append("<165>host1 app: hello");
  e.host = {5, 5};
  e.app = {11, 3};
  e.facility = 20;
  e.severity = 5;
  e.port = 5140;
  e.timestamp_ms = 1700000000123;
  e.client_offset = builder.append_to_last("10.1.2.3");  // the record stays put: only bytes grow
  builder.append_to_last("web01.example");
  e.client_ip_length = 8;
  e.client_host_length = 13;
  EventBatch batch = builder.seal();
  const EventRecord& r = batch[0];
  char scratch[24];
  CHECK(batch.raw(r) == "<165>host1 app: hello");  // the address is not part of the frame
  CHECK(batch.field(r, EventField::host, scratch) == "host1");
  CHECK(batch.field(r, EventField::app, scratch) == "app");
  CHECK(batch.field(r, EventField::msgid, scratch) == "");  // absent
  CHECK(batch.field(r, EventField::client_ip, scratch) == "10.1.2.3");
  CHECK(batch.field(r, EventField::client_host, scratch) == "web01.example");
  CHECK(batch.field(r, EventField::facility, scratch) == "20");
  CHECK(batch.field(r, EventField::port, scratch) == "5140");
  CHECK(batch.field(r, EventField::timestamp, scratch) == "1700000000123");
  CHECK(EventBatch::numeric_field(r, EventField::severity) == 5);
  CHECK(EventBatch::numeric_field(r, EventField::host) == -1);
}

TEST_CASE("field names are read as Flume's header names, in any case, with their synonyms", "[event_batch]") {
  CHECK(event_field_from_name("Facility") == EventField::facility);
  CHECK(event_field_from_name("SEVERITY") == EventField::severity);
  CHECK(event_field_from_name("hostname") == EventField::host);
  CHECK(event_field_from_name("program") == EventField::app);
  CHECK(event_field_from_name("pid") == EventField::procid);
  CHECK(event_field_from_name("clientIP") == EventField::client_ip);
  CHECK(event_field_from_name("client_hostname") == EventField::client_host);
  CHECK_FALSE(event_field_from_name("topic").has_value());
  CHECK_FALSE(event_field_from_name("").has_value());
}

TEST_CASE("a batch's bytes are all its events occupy, and a small batch after a large one keeps no large reservation",
          "[batch]") {
  EventBatchBuilder builder;
  for (int i = 0; i < 1000; ++i) builder.append(std::string(1000, 'x'));
  EventBatch large = builder.seal();
  CHECK(large.bytes() == 1000 * 1000);
  builder.append("<13>app: small");
  builder.append_to_last("127.0.0.1localhost");  // what a source appends for clientIPHeader and the name
  EventBatch small = builder.seal();
  CHECK(small.bytes() == 14 + 18);
  EventBatch copy = small;
  CHECK(copy.split_front(1).bytes() == 14 + 18);
  // The builder had reserved 1.25 MB for it (the large batch's size); the sealed batch gave it back.
  CHECK(small.storage()->bytes.capacity() < 4096);
  CHECK(small.storage()->events.capacity() < 16);
}

TEST_CASE("a routed batch brings each route's events together, in arrival order, bytes and headers with them",
          "[event_batch]") {
  EventBatchBuilder builder;
  const std::vector<std::pair<std::string, uint8_t>> sent{{"<11>zero", 1},  {"<13>one", 0},  {"<11>two", 1},
                                                          {"<14>three", 2}, {"<13>four", 0}, {"<11>dropped", 2}};
  for (size_t i = 0; i < sent.size(); ++i) {
    builder.append(sent[i].first);
    builder.append_to_last("+client" + std::to_string(i));
    if (i == 2) {
      HeaderWriter headers;
      headers.set("dc", "ams");
      builder.set_last_headers(headers.block());
    }
    if (sent[i].first == "<11>dropped") {
      builder.drop_last();  // an interceptor filtered it out, before it was routed
      continue;
    }
    builder.set_last_route(sent[i].second);
    CHECK(builder.last_route() == sent[i].second);
  }
  CHECK(builder.size() == 5);
  RoutedBatch routed = builder.seal_routed(3);
  REQUIRE(routed.parts.size() == 3);
  CHECK(routed.original_index == std::vector<uint32_t>{1, 4, 0, 2, 3});
  CHECK(raws(routed.parts[0]) == std::vector<std::string>{"<13>one", "<13>four"});
  CHECK(raws(routed.parts[1]) == std::vector<std::string>{"<11>zero", "<11>two"});
  CHECK(raws(routed.parts[2]) == std::vector<std::string>{"<14>three"});
  const size_t block = [&] {
    HeaderWriter h;
    h.set("dc", "ams");
    return h.block().size();
  }();
  CHECK(routed.parts[0].bytes() == 7 + 8 + 2 * 8);
  CHECK(routed.parts[1].bytes() == 8 + 7 + 2 * 8 + block);
  CHECK(routed.parts[2].bytes() == 9 + 8);
  // What was appended after each frame moved with it; the header block too.
  char scratch[24];
  const EventBatch& errors = routed.parts[1];
  CHECK(errors.header(errors[1], "dc", scratch) == std::optional<std::string_view>("ams"));
  CHECK(!errors.header(errors[0], "dc", scratch));
  CHECK(errors.raw(errors[1]) == "<11>two");
  CHECK(builder.empty());

  // One route only: its part is the batch, in the order the events arrived.
  builder.append("<13>a");
  builder.set_last_route(1);
  builder.append("<13>b");
  builder.set_last_route(1);
  RoutedBatch one = builder.seal_routed(2);
  CHECK(one.parts[0].empty());
  CHECK(raws(one.parts[1]) == std::vector<std::string>{"<13>a", "<13>b"});
  CHECK(one.original_index.empty());  // in the order they arrived
  // Nothing said of the routes: all route 0.
  builder.append("<13>c");
  RoutedBatch plain = builder.seal_routed(1);
  REQUIRE(plain.parts.size() == 1);
  CHECK(raws(plain.parts[0]) == std::vector<std::string>{"<13>c"});
  CHECK(plain.original_index.empty());
}

TEST_CASE("routed parts report commits to the acknowledger in sealed order", "[event_batch]") {
  struct Recording : CommitTracker {
    std::vector<std::pair<size_t, size_t>> commits;
    void committed(size_t first, size_t count) override { commits.emplace_back(first, count); }
  };
  const auto recording = std::make_shared<Recording>();
  EventBatchBuilder builder;
  builder.set_acknowledger(recording);
  for (const uint8_t route : {1, 0, 1, 1, 0}) {
    builder.append("<13>x");
    builder.set_last_route(route);
  }
  RoutedBatch routed = builder.seal_routed(2);
  CHECK(routed.original_index == std::vector<uint32_t>{1, 4, 0, 2, 3});
  routed.parts[1].slice(1, 2).report_commit();
  routed.parts[0].report_commit();
  CHECK(recording->commits == std::vector<std::pair<size_t, size_t>>{{3, 2}, {0, 2}});
  CHECK(routed.parts[1].arrived_at() == routed.parts[0].arrived_at());

  // A batch all of whose events took route 1 leaves route 0's storage empty: the next batch's
  // events do not answer to this batch's acknowledger.
  builder.append("<13>y");
  builder.set_last_route(1);
  RoutedBatch aside = builder.seal_routed(2);
  CHECK(aside.parts[0].empty());
  builder.append("<13>z");
  const EventBatch next = builder.seal();
  recording->commits.clear();
  next.report_commit();
  CHECK(recording->commits.empty());
  builder.append("<13>w");
  builder.set_last_route(1);
  CHECK_THROWS_AS(builder.set_last_route(0), std::logic_error);  // once per event
  CHECK_THROWS_AS(builder.seal(), std::logic_error);             // events aside: seal_routed()
  CHECK_THROWS_AS(builder.seal_routed(1), std::logic_error);     // route 1 is not one of its routes
}

TEST_CASE("a copy without the acknowledger shares the storage and reports no commit, nor do its slices",
          "[event_batch]") {
  struct Counting : CommitTracker {
    size_t events = 0;
    void committed(size_t, size_t count) override { events += count; }
  };
  const auto counting = std::make_shared<Counting>();
  EventBatchBuilder builder;
  builder.set_acknowledger(counting);
  builder.append("<13>a");
  builder.append("<13>b");
  const EventBatch batch = builder.seal();
  const EventBatch copy = batch.without_acknowledger();
  CHECK(copy.storage() == batch.storage());
  copy.report_commit();
  copy.slice(0, 1).report_commit();
  EventBatch rest = copy;
  rest.split_front(1).report_commit();
  rest.report_commit();
  CHECK(!copy.origin().acknowledger);
  CHECK(counting->events == 0);
  batch.report_commit();
  CHECK(counting->events == 2);
}
