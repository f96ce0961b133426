// Arrival stamps and the latency a sink records at commit: one stamp per batch at its first
// event, observations weighted by events, the three histograms consistent with each other.

#include <catch2/catch.hpp>

#include <string>

#include "agent/api/pipeline_latency.h"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

EventBatch batch_of_count(int events) {
  EventBatchBuilder builder;
  for (int i = 0; i < events; ++i) builder.append("<13>x app: e" + std::to_string(i));
  return builder.seal();
}

Take take_of(std::vector<EventBatch> batches) {
  Take take;
  for (EventBatch& b : batches) {
    take.events += b.size();
    take.bytes += b.bytes();
    take.batches.push_back(std::move(b));
  }
  return take;
}

}  // namespace

TEST_CASE("a batch arrives when its first event is appended, not when it is sealed, and its slices share the stamp",
          "[latency]") {
  EventBatchBuilder builder;
  const Clock::time_point before = Clock::now();
  builder.append("<13>first");
  const Clock::time_point after_first = Clock::now();
  builder.append("<13>second");
  EventBatch batch = builder.seal();
  CHECK(batch.arrived_at() >= before);
  CHECK(batch.arrived_at() <= after_first);
  CHECK(batch.slice(1, 1).arrived_at() == batch.arrived_at());
  CHECK(batch.origin().arrived_at == batch.arrived_at());
  // The builder's next batch has a stamp of its own.
  const Clock::time_point before_next = Clock::now();
  builder.append("<13>third");
  CHECK(builder.seal().arrived_at() >= before_next);
  CHECK(EventBatch{}.arrived_at() == Clock::time_point{});
}

TEST_CASE("the latency of a committed take is observed once per event: arrival to take, take to commit, and the whole",
          "[latency]") {
  PipelineLatency latency;
  EventBatch older = batch_of_count(3);
  EventBatch newer = batch_of_count(7);
  const Clock::time_point taken_at = newer.arrived_at() + 3ms;
  const Clock::time_point committed_at = taken_at + 37ms;
  const double older_total = std::chrono::duration<double>(committed_at - older.arrived_at()).count();
  const double newer_total = std::chrono::duration<double>(committed_at - newer.arrived_at()).count();
  latency.committed(take_of({older, newer}), taken_at, committed_at);
  const PipelineLatencies h = latency.snapshot();
  CHECK(h.arrival_to_commit.count == 10);
  CHECK(h.channel_wait.count == 10);
  CHECK(h.delivery.count == 10);
  CHECK(h.arrival_to_commit.sum_seconds == Approx(3 * older_total + 7 * newer_total));
  CHECK(h.delivery.sum_seconds == Approx(10 * 0.037));
  CHECK(h.delivery.counts[DurationHistogram::bucket_of(0.037)] == 10);  // the 25-50 ms bucket
  CHECK(h.channel_wait.counts[DurationHistogram::bucket_of(0.003)] >= 7);
  // Each event's whole is its wait plus its delivery.
  CHECK(h.arrival_to_commit.sum_seconds == Approx(h.channel_wait.sum_seconds + h.delivery.sum_seconds));
}

TEST_CASE("batches of unknown arrival (replayed from disk after a restart) are left out of the latency", "[latency]") {
  auto storage = std::make_shared<EventStorage>();
  storage->events.resize(5);
  EventBatch replayed = EventBatch::of(storage);
  REQUIRE(replayed.arrived_at() == Clock::time_point{});
  PipelineLatency latency;
  const Clock::time_point now = Clock::now();
  latency.committed(take_of({replayed, batch_of_count(2)}), now, now + 1ms);
  CHECK(latency.snapshot().arrival_to_commit.count == 2);
}

TEST_CASE("duration buckets run from 250 microseconds to a minute, and the last one takes the rest", "[latency]") {
  CHECK(DurationHistogram::bucket_of(0) == 0);
  CHECK(DurationHistogram::bucket_of(0.00025) == 0);
  CHECK(DurationHistogram::bucket_of(0.0003) == 1);
  CHECK(DurationHistogram::bucket_of(60) == DurationHistogram::kBuckets - 2);
  CHECK(DurationHistogram::bucket_of(3600) == DurationHistogram::kBuckets - 1);
  AtomicDurationHistogram atomic;
  atomic.observe(2ms, 4);
  const DurationHistogram snapshot = atomic.snapshot();
  CHECK(snapshot.count == 4);
  CHECK(snapshot.counts[DurationHistogram::bucket_of(0.002)] == 4);
  CHECK(snapshot.sum_seconds == Approx(0.008));
  DurationHistogram twice = snapshot;
  twice += snapshot;
  CHECK(twice.count == 8);
  CHECK(twice.sum_seconds == Approx(0.016));
}
