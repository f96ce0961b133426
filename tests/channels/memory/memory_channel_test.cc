#include <catch2/catch.hpp>

#include <deque>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "channels/memory/memory_channel.h"
#include "channels/memory/memory_channel_config.h"
#include "tests/support/component.h"
#include "tests/support/recording_acknowledger.h"
#include "tests/support/test_thread.h"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

EventBatch batch_of_n(int n, const std::string& prefix = "e") {
  EventBatchBuilder builder;
  for (int i = 0; i < n; ++i) builder.append(prefix + std::to_string(i));
  return builder.seal();
}

MemoryChannel channel(size_t capacity, size_t transaction_capacity) {
  return MemoryChannel("c", MemoryChannelConfig{capacity, transaction_capacity, {}, 20});
}

std::vector<std::string> texts(const Take& take) {
  std::vector<std::string> out;
  for (const EventBatch& b : take.batches)
    for (const EventRecord& e : b) out.emplace_back(b.raw(e));
  return out;
}

}  // namespace

TEST_CASE("a take returns events in put order and splits batches at max_events", "[channel]") {
  MemoryChannel c = channel(100, 10);
  EventBatch a = batch_of_n(4, "a"), b = batch_of_n(4, "b");
  REQUIRE(c.put(a, Clock::now()));
  REQUIRE(c.put(b, Clock::now()));
  CHECK(a.empty());
  Take first = c.take(6, Clock::now());
  CHECK(texts(first) == std::vector<std::string>{"a0", "a1", "a2", "a3", "b0", "b1"});
  Take second = c.take(6, Clock::now());
  CHECK(texts(second) == std::vector<std::string>{"b2", "b3"});
  CHECK(c.take(6, Clock::now()).empty());
}

TEST_CASE("capacity counts taken events until commit", "[channel]") {
  MemoryChannel c = channel(10, 10);
  EventBatch a = batch_of_n(8);
  REQUIRE(c.put(a, Clock::now()));
  Take t = c.take(8, Clock::now());
  EventBatch more = batch_of_n(5);
  CHECK_FALSE(c.put(more, Clock::now() + 10ms));  // the 8 taken still occupy the channel
  CHECK(more.size() == 5);                        // a refused put leaves the batch with the caller
  c.commit(t);
  CHECK(c.put(more, Clock::now()));
  CHECK(c.counters().events_held == 5);
}

TEST_CASE("rollback puts events back at the front in their order", "[channel]") {
  MemoryChannel c = channel(100, 10);
  EventBatch a = batch_of_n(3, "a"), b = batch_of_n(2, "b");
  REQUIRE(c.put(a, Clock::now()));
  Take t = c.take(3, Clock::now());
  REQUIRE(c.put(b, Clock::now()));
  c.rollback(std::move(t));
  CHECK(texts(c.take(10, Clock::now())) == std::vector<std::string>{"a0", "a1", "a2", "b0", "b1"});
  CHECK(c.counters().events_rolled_back == 3);
}

TEST_CASE("a put on a full channel waits until its deadline and leaves the batch untouched", "[channel]") {
  MemoryChannel c = channel(4, 4);
  EventBatch full = batch_of_n(4);
  REQUIRE(c.put(full, Clock::now()));
  EventBatch next = batch_of_n(2);
  const auto start = Clock::now();
  CHECK_FALSE(c.put(next, start + 50ms));
  CHECK(Clock::now() - start >= 50ms);
  CHECK(next.size() == 2);
  CHECK(c.counters().events_held == 4);
  CHECK(c.counters().put_blocked >= 50ms);
  CHECK(c.take(4, Clock::now() + 20ms).events == 4);
  MemoryChannel empty = channel(4, 4);
  CHECK(empty.take(4, Clock::now() + 20ms).empty());  // times out rather than waiting forever
}

TEST_CASE("a waiting put goes on once a sink commits, and a waiting take once a source puts", "[channel]") {
  MemoryChannel c = channel(4, 4);
  EventBatch full = batch_of_n(4);
  REQUIRE(c.put(full, Clock::now()));
  // Whether the commit comes before or during the put, the put must succeed by its deadline
  // (the previous test shows that it waits while the channel is full).
  test::TestThread sink([&] {
    Take t = c.take(4, Clock::now() + 5s);
    c.commit(t);
  });
  EventBatch next = batch_of_n(2);
  CHECK(c.put(next, Clock::now() + 10s));
  sink.join();
  CHECK(c.counters().events_held == 2);

  MemoryChannel empty = channel(4, 4);
  test::TestThread source([&] {
    EventBatch b = batch_of_n(1);
    empty.put(b, Clock::now() + 5s);
  });
  Take t = empty.take(4, Clock::now() + 10s);
  CHECK(t.events == 1);
  source.join();
}

TEST_CASE("many producers and consumers move every event exactly once", "[channel]") {
  MemoryChannel c = channel(1000, 100);
  constexpr int kProducers = 4, kBatches = 500, kPerBatch = 50;
  std::atomic<int> refused{0};
  std::atomic<bool> done{false};
  std::deque<test::TestThread> threads;  // a deque: emplacing moves none of them
  for (int p = 0; p < kProducers; ++p)
    threads.emplace_back([&, p] {
      for (int i = 0; i < kBatches; ++i) {
        // Every event its own payload, so that a duplicate and a loss cannot cancel out.
        EventBatch b = batch_of_n(kPerBatch, "p" + std::to_string(p) + "b" + std::to_string(i) + "e");
        if (!c.put(b, Clock::now() + 10s)) ++refused;  // Catch's assertions are not thread-safe: counted here
      }
    });
  constexpr int kConsumers = 3;
  std::vector<std::vector<std::string>> seen(kConsumers);  // each consumer's own, checked on this thread
  std::deque<test::TestThread> consumers;
  for (int k = 0; k < kConsumers; ++k)
    consumers.emplace_back([&, k] {
      while (!done.load() || c.counters().events_held > 0) {
        Take t = c.take(100, Clock::now() + 20ms);
        for (const EventBatch& b : t.batches)
          for (const EventRecord& e : b) seen[k].emplace_back(b.raw(e));
        c.commit(t);
      }
    });
  for (auto& t : threads) t.join();
  done = true;
  for (auto& t : consumers) t.join();
  CHECK(refused.load() == 0);
  std::vector<std::string> all;
  for (const auto& s : seen) all.insert(all.end(), s.begin(), s.end());
  const std::set<std::string> unique(all.begin(), all.end());
  CHECK(all.size() == kProducers * kBatches * kPerBatch);
  CHECK(unique.size() == all.size());
}

TEST_CASE("a source's acknowledger hears of each event's commit once, after a split take and a rollback",
          "[channel][ack]") {
  MemoryChannel c = channel(100, 10);
  CHECK_FALSE(c.puts_reach_disk());
  const auto acknowledger = std::make_shared<test::RecordingAcknowledger>();
  EventBatch batch = test::acknowledged_batch(0, 8, acknowledger);
  REQUIRE(c.put(batch, Clock::now() + 1s));
  Take first = c.take(3, Clock::now());
  c.rollback(std::move(first));
  Take a = c.take(5, Clock::now());
  CHECK(acknowledger->times().empty());  // taken is not committed
  c.commit(a);
  CHECK(acknowledger->times() == test::each_once(5));
  Take b = c.take(5, Clock::now());
  REQUIRE(b.events == 3);
  c.commit(b);
  CHECK(acknowledger->times() == test::each_once(8));
}

TEST_CASE("byteCapacity bounds the bytes held, 256m unless configured, a lone batch larger than it let in",
          "[channel]") {
  // Batches of 10 events of 12 bytes (120 bytes); byteCapacity 400 holds 320 after the 20% kept
  // for headers: two batches, not three.
  MemoryChannel small("c", MemoryChannelConfig{1000, 1000, config::ByteSize{400}, 20});
  EventBatch first = batch_of_n(10, "0123456789-"), second = batch_of_n(10, "0123456789-"),
             third = batch_of_n(10, "0123456789-");
  REQUIRE(first.bytes() == 120);
  REQUIRE(small.put(first, Clock::now()));
  REQUIRE(small.put(second, Clock::now()));
  CHECK_FALSE(small.put(third, Clock::now() + 10ms));  // beyond the bound: it waits (backpressure)
  CHECK(third.size() == 10);                           // untouched
  CHECK(small.counters().bytes_held == 240);
  MemoryChannel tiny("c", MemoryChannelConfig{1000, 1000, config::ByteSize{10}, 20});
  EventBatch big = batch_of_n(10, "0123456789-");
  CHECK(tiny.put(big, Clock::now()));  // larger than the bound, into an empty channel: let in
  const auto component = test::component(config::Kind::channel, "c", "memory", {});
  CHECK(parse_memory_channel_config(component).byte_capacity.bytes == 256 << 20);
}
