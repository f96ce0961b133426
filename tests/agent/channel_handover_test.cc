// Events handed from a channel that goes to its successor: in order, as far as there is room,
// and a sender that waits for acknowledgements (RELP) hears of each event once, when the channel
// that finally delivered it commits it.

#include <catch2/catch.hpp>

#include "agent/channel_handover.h"
#include "channels/memory/memory_channel.h"
#include "channels/spillable/spillable_channel.h"
#include "tests/support/component.h"
#include "tests/support/process.h"
#include "tests/support/recording_acknowledger.h"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<Channel> memory_channel(size_t capacity) {
  auto channel = std::make_unique<MemoryChannel>("c", MemoryChannelConfig{capacity, 100, {}, 20});
  channel->open();
  return channel;
}

// Takes and commits all the channel holds; returns the events' texts in order.
std::vector<std::string> deliver_all(Channel& channel) {
  std::vector<std::string> seen;
  for (Take take = channel.take(1000, Clock::now()); !take.empty(); take = channel.take(1000, Clock::now())) {
    for (const EventBatch& b : take.batches)
      for (const EventRecord& e : b) seen.emplace_back(b.raw(e));
    channel.commit(take);
  }
  return seen;
}

std::vector<std::string> numbered(int first, int n) {
  std::vector<std::string> out;
  for (int i = first; i < first + n; ++i) out.push_back("<13>x app: e" + std::to_string(i));
  return out;
}

}  // namespace

TEST_CASE("moved events are acknowledged once, by the channel that delivers them, and the rest stays in order",
          "[agent][handover]") {
  auto acknowledger = std::make_shared<test::RecordingAcknowledger>();
  auto from = memory_channel(100);
  auto to = memory_channel(6);
  EventBatch batch = test::acknowledged_batch(0, 10, acknowledger);
  REQUIRE(from->put(batch, Clock::now() + 1s));

  REQUIRE(move_events(*from, *to) == 6);
  CHECK(acknowledger->times().empty());  // moved, not yet delivered: the sender must not hear of it
  CHECK(from->counters().events_held == 4);

  CHECK(deliver_all(*to) == numbered(0, 6));
  std::map<size_t, int> first_six = test::each_once(6);
  CHECK(acknowledger->times() == first_six);
  CHECK(deliver_all(*from) == numbered(6, 4));
  CHECK(acknowledger->times() == test::each_once(10));
}

TEST_CASE("events read back from a spillable channel's disk move into its successor and leave the disk",
          "[agent][handover]") {
  test::TempDir dir;
  auto acknowledger = std::make_shared<test::RecordingAcknowledger>();
  const auto component = test::component(
      config::Kind::channel, "c", "spillablememory",
      {{"dataDir", dir.path()}, {"memoryCapacity", "0"}, {"transactionCapacity", "100"}, {"fsync", "never"}});
  auto from = kSpillableChannelSpec.make_channel(component);
  from->open();
  EventBatch batch = test::acknowledged_batch(0, 8, acknowledger);
  REQUIRE(from->put(batch, Clock::now() + 1s));
  REQUIRE(from->counters().events_on_disk == 8);

  auto to = memory_channel(100);
  REQUIRE(move_events(*from, *to) == 8);
  CHECK(from->counters().events_held == 0);
  CHECK(from->counters().events_on_disk == 0);
  CHECK(acknowledger->times().empty());
  CHECK(deliver_all(*to) == numbered(0, 8));
  CHECK(acknowledger->times() == test::each_once(8));
  from->close();
}

TEST_CASE("no more than the limit moves, and the rest stays in order", "[agent][handover]") {
  auto from = memory_channel(100);
  auto to = memory_channel(100);
  EventBatch batch = test::acknowledged_batch(0, 10, std::make_shared<test::RecordingAcknowledger>());
  REQUIRE(from->put(batch, Clock::now() + 1s));
  CHECK(move_events(*from, *to, 3) == 3);
  CHECK(deliver_all(*to) == numbered(0, 3));
  CHECK(deliver_all(*from) == numbered(3, 7));
}
