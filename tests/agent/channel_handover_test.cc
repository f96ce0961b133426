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

std::vector<std::string> numbered_lines(int first, int n) {
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

  CHECK(deliver_all(*to) == numbered_lines(0, 6));
  std::map<size_t, int> first_six = test::each_once(6);
  CHECK(acknowledger->times() == first_six);
  CHECK(deliver_all(*from) == numbered_lines(6, 4));
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
  CHECK(deliver_all(*to) == numbered_lines(0, 8));
  CHECK(acknowledger->times() == test::each_once(8));
  from->close();
}

TEST_CASE("no more than the limit moves, and the rest stays in order", "[agent][handover]") {
  auto from = memory_channel(100);
  auto to = memory_channel(100);
  EventBatch batch = test::acknowledged_batch(0, 10, std::make_shared<test::RecordingAcknowledger>());
  REQUIRE(from->put(batch, Clock::now() + 1s));
  CHECK(move_events(*from, *to, 3) == 3);
  CHECK(deliver_all(*to) == numbered_lines(0, 3));
  CHECK(deliver_all(*from) == numbered_lines(3, 7));
}

namespace {

std::unique_ptr<Channel> spillable(const std::string& checkpoint, const std::string& data,
                                   std::map<std::string, std::string> properties = {}) {
  properties.insert(
      {{"checkpointDir", checkpoint}, {"dataDir", data}, {"transactionCapacity", "100"}, {"fsync", "never"}});
  return kSpillableChannelSpec.make_channel(test::component(config::Kind::channel, "c", "spillablememory", properties));
}

}  // namespace

TEST_CASE("disk channels share storage if any of their directories is the same, however it is spelled",
          "[agent][handover]") {
  test::TempDir dir;
  const std::string a = dir.path() + "/a", b = dir.path() + "/b", c = dir.path() + "/c";
  CHECK(share_storage(*spillable(a, b), *spillable(a + "/", dir.path() + "/./b")));
  CHECK(share_storage(*spillable(a, b), *spillable(c, b)));  // the data alone
  CHECK(share_storage(*spillable(a, b), *spillable(b, c)));  // one's data is the other's checkpoint
  CHECK_FALSE(share_storage(*spillable(a, b), *spillable(c, dir.path() + "/d")));
  CHECK_FALSE(share_storage(*spillable(a, b), *memory_channel(10)));
}

TEST_CASE("at a stop no more moves into a disk channel than its close can keep on disk, in bytes too",
          "[agent][handover]") {
  test::TempDir dir;
  auto from = memory_channel(100);
  // Room on disk for about two of the ten-event batches (each event ~20 bytes plus its record).
  auto to =
      spillable(dir.path() + "/cp", dir.path() + "/data", {{"maxBytesOnDisk", "2000"}, {"minimumRequiredSpace", "0"}});
  to->open();
  for (int i = 0; i < 5; ++i) {
    EventBatch batch = test::acknowledged_batch(i * 10, 10, std::make_shared<test::RecordingAcknowledger>());
    REQUIRE(from->put(batch, Clock::now() + 1s));
  }
  const uint64_t moved = move_events(*from, *to, UINT64_MAX, true);
  CHECK(moved > 0);
  CHECK(moved < 50);
  CHECK(from->counters().events_held == 50 - moved);
  to.reset();  // closed: all it took reaches its disk, nothing lost at close
  auto reopened = spillable(dir.path() + "/cp", dir.path() + "/data", {{"minimumRequiredSpace", "0"}});
  reopened->open();
  CHECK(deliver_all(*reopened) == numbered_lines(0, static_cast<int>(moved)));
  CHECK(deliver_all(*from) == numbered_lines(static_cast<int>(moved), 50 - static_cast<int>(moved)));
}
