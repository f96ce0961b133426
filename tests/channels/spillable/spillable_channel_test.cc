// The spillable channel in-process: memory first, then disk, in order; commits release
// records; backpressure when both are full; a clean close keeps memory; a lost take replays.

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "channels/spillable/spillable_channel.h"
#include "tests/support/component.h"
#include "tests/support/process.h"
#include "tests/support/recording_acknowledger.h"

using namespace sluice;
using namespace std::chrono_literals;
using sluice::test::TempDir;

namespace {

config::ComponentConfig channel_component(const std::string& type, const TempDir& dir,
                                          std::map<std::string, std::string> properties) {
  properties.emplace("dataDir", dir.path());
  properties.emplace("transactionCapacity", "100");
  properties.emplace("fsync", "never");
  return test::component(config::Kind::channel, "c", type, properties);
}

std::unique_ptr<Channel> open_channel(const std::string& type, const TempDir& dir,
                                      const std::map<std::string, std::string>& properties) {
  const auto component = channel_component(type, dir, properties);
  const ComponentSpec& spec = type == "file" ? kFileChannelSpec : kSpillableChannelSpec;
  auto channel = spec.make_channel(component);
  channel->open();
  return channel;
}

// Events "e<first>" .. "e<first + n - 1>".
EventBatch numbered_batch(int first, int n) {
  EventBatchBuilder builder;
  for (int i = first; i < first + n; ++i) builder.append("<13>x app: e" + std::to_string(i));
  return builder.seal();
}

void put(Channel& channel, int first, int n) {
  EventBatch batch = numbered_batch(first, n);
  REQUIRE(channel.put(batch, Clock::now() + 1s));
}

// Takes everything (several takes of at most `max` events) and returns the numbers in order.
std::vector<int> drain_numbers(Channel& channel, size_t max = 1000, bool commit = true) {
  std::vector<int> seen;
  for (Take take = channel.take(max, Clock::now()); !take.empty(); take = channel.take(max, Clock::now())) {
    for (const EventBatch& b : take.batches)
      for (const EventRecord& e : b) seen.push_back(std::stoi(std::string(b.raw(e).substr(b.raw(e).find(": e") + 3))));
    if (commit) channel.commit(take);
  }
  return seen;
}

std::vector<int> range(int first, int n) {
  std::vector<int> v;
  for (int i = first; i < first + n; ++i) v.push_back(i);
  return v;
}

}  // namespace

TEST_CASE("spillable channel keeps order across memory and disk and frees the disk on commit", "[spill][channel]") {
  TempDir dir;
  auto channel = open_channel("spillablememory", dir, {{"memoryCapacity", "10"}});
  for (int b = 0; b < 12; ++b) put(*channel, b * 5, 5);
  ChannelCounters c = channel->counters();
  CHECK(c.events_held == 60);
  const SpillCounters disk = static_cast<SpillableChannel&>(*channel).spill_counters();
  CHECK(disk.events_spilled == 50);
  CHECK(c.events_on_disk == 50);
  CHECK(disk.bytes_on_disk > 0);
  CHECK(drain_numbers(*channel, 7) == range(0, 60));
  c = channel->counters();
  CHECK(c.events_held == 0);
  CHECK(c.events_on_disk == 0);
  CHECK(c.events_committed == 60);
  // Only the segment being written remains (until it fills up), holding nothing to deliver.
  size_t segment_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) segment_files += e.path().extension() == ".sls";
  CHECK(segment_files == 1);
  channel.reset();
  CHECK(open_channel("spillablememory", dir, {{"memoryCapacity", "10"}})->counters().events_recovered == 0);
}

TEST_CASE("spillable channel pushes back when memory and disk are both full", "[spill][channel]") {
  TempDir dir;
  auto channel = open_channel("spillablememory", dir,
                              {{"memoryCapacity", "5"}, {"overflowCapacity", "10"}, {"transactionCapacity", "10"}});
  put(*channel, 0, 5);   // memory
  put(*channel, 5, 10);  // disk
  EventBatch more = numbered_batch(15, 5);
  const auto started = Clock::now();
  CHECK_FALSE(channel->put(more, Clock::now() + 300ms));
  CHECK(Clock::now() - started >= 250ms);
  CHECK(more.size() == 5);  // untouched: nothing dropped
  CHECK(channel->counters().put_blocked > 0ns);
  Take take = channel->take(5, Clock::now());
  channel->commit(take);
  CHECK(channel->put(more, Clock::now() + 1s));
  CHECK(drain_numbers(*channel) == range(5, 15));
}

TEST_CASE("the memory part spills beyond byteCapacity as beyond memoryCapacity, and byteCapacity has a default",
          "[spill][channel]") {
  TempDir dir;
  // 20 events of 17-18 bytes a batch (~350 bytes): byteCapacity 1000 (800 after the 20% kept for
  // headers) holds two such batches, far under memoryCapacity.
  auto channel = open_channel("spillablememory", dir, {{"memoryCapacity", "10000"}, {"byteCapacity", "1000"}});
  for (int i = 0; i < 5; ++i) put(*channel, i * 20, 20);
  const auto& spillable = static_cast<const SpillableChannel&>(*channel);
  CHECK(spillable.spill_counters().events_spilled == 60);
  CHECK(channel->counters().bytes_held <= 800);
  std::vector<int> expected(100);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(drain_numbers(*channel) == expected);
  const auto defaults = parse_spillable_channel_config(channel_component("spillablememory", dir, {}), false);
  CHECK(defaults.byte_capacity.bytes == 256 << 20);
}

TEST_CASE("maxBytesOnDisk bounds the segment files", "[spill][channel]") {
  TempDir dir;
  auto channel = open_channel("file", dir, {{"maxBytesOnDisk", "1k"}});
  put(*channel, 0, 10);
  EventBatch big = numbered_batch(10, 100);
  CHECK_FALSE(channel->put(big, Clock::now() + 200ms));
  CHECK(drain_numbers(*channel) == range(0, 10));
  CHECK(channel->put(big, Clock::now() + 1s));
}

TEST_CASE("a record split across takes and rolled back is released only when all its events are committed",
          "[spill][channel]") {
  TempDir dir;
  auto channel = open_channel("file", dir, {});
  put(*channel, 0, 10);
  Take first = channel->take(4, Clock::now());
  REQUIRE(first.events == 4);
  channel->rollback(std::move(first));
  Take second = channel->take(3, Clock::now());
  REQUIRE(second.events == 3);
  channel->commit(second);
  CHECK(channel->counters().events_on_disk == 7);  // still to deliver; the record stays until then
  CHECK(drain_numbers(*channel) == range(3, 7));
  CHECK(channel->counters().events_on_disk == 0);
}

TEST_CASE("a clean close writes memory to disk and a reopened channel delivers it all in order", "[spill][channel]") {
  TempDir dir;
  {
    auto channel = open_channel("spillablememory", dir, {{"memoryCapacity", "20"}});
    for (int b = 0; b < 6; ++b) put(*channel, b * 5, 5);  // 20 in memory, 10 on disk
    channel->close();
    CHECK(channel->counters().events_on_disk == 30);
  }
  auto reopened = open_channel("spillablememory", dir, {{"memoryCapacity", "20"}});
  CHECK(reopened->counters().events_recovered == 30);
  std::vector<int> seen = drain_numbers(*reopened);
  std::sort(seen.begin(), seen.end());  // what was on disk first, then what memory held
  CHECK(seen == range(0, 30));
}

TEST_CASE("events taken but never committed are delivered again after a restart", "[spill][channel]") {
  TempDir dir;
  {
    auto channel = open_channel("file", dir, {});
    put(*channel, 0, 10);
    put(*channel, 10, 10);
    Take taken = channel->take(10, Clock::now());
    REQUIRE(taken.events == 10);
    Take committed = channel->take(10, Clock::now());
    channel->commit(committed);
    // The agent dies here with the first take in flight: it was never committed.
  }
  auto reopened = open_channel("file", dir, {});
  CHECK(drain_numbers(*reopened) == range(0, 10));
}

TEST_CASE("a record partly delivered and partly rolled back replays only its undelivered events after a restart",
          "[spill][channel]") {
  TempDir dir;
  {
    auto channel = open_channel("file", dir, {});
    put(*channel, 0, 10);
    Take take = channel->take(10, Clock::now());
    REQUIRE(take.events == 10);
    // What a sink does when events 4-6 failed: commit the delivered slices, roll back the rest.
    const EventBatch& record = take.batches.at(0);
    channel->commit(Take{{record.slice(0, 4), record.slice(7, 3)}, 7, 0});
    channel->rollback(Take{{record.slice(4, 3)}, 3, 0});
    channel->close();
    CHECK(channel->counters().events_on_disk == 3);
  }
  auto reopened = open_channel("file", dir, {});
  CHECK(reopened->counters().events_recovered == 3);
  CHECK(drain_numbers(*reopened) == std::vector<int>{4, 5, 6});  // not 0-9: the delivered part is not sent twice
  CHECK(reopened->counters().events_on_disk == 0);
}

TEST_CASE("a record split across takes and killed half way replays only the events never committed",
          "[spill][channel]") {
  TempDir dir;
  {
    auto channel = open_channel("file", dir, {});
    put(*channel, 0, 10);
    Take first = channel->take(4, Clock::now());
    REQUIRE(first.events == 4);
    channel->commit(first);
    Take second = channel->take(3, Clock::now());
    REQUIRE(second.events == 3);
    // The agent dies with the second take in flight (no commit, no close: the store is simply dropped).
  }
  auto reopened = open_channel("file", dir, {});
  CHECK(drain_numbers(*reopened) == range(4, 6));
}

namespace {

// Flips a byte inside the payload of the first record of the first segment file.
void corrupt_first_record(const TempDir& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().extension() != ".sls") continue;
    std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(16 + spill::SegmentStore::kRecordHeader + 3);  // segment header, record header, into the payload
    f.put('\xff');
    return;
  }
  FAIL("no segment file");
}

}  // namespace

TEST_CASE("a record that fails its CRC in a take smaller than the record is counted and the take keeps its events",
          "[spill][channel]") {
  TempDir dir;
  auto channel = open_channel("file", dir, {});
  put(*channel, 0, 100);  // the record that will be corrupt
  put(*channel, 100, 100);
  corrupt_first_record(dir);
  Take take = channel->take(50, Clock::now());  // smaller than either record: the split path
  size_t in_batches = 0;
  for (const EventBatch& b : take.batches) in_batches += b.size();
  CHECK(take.events == 50);
  CHECK(in_batches == 50);
  CHECK(channel->counters().events_unreadable == 100);
  channel->commit(take);
  CHECK(drain_numbers(*channel) == range(150, 50));
  CHECK(channel->counters().events_on_disk == 0);
}

TEST_CASE("a commit log write error (disk full) is logged and counted and the channel keeps running",
          "[spill][channel]") {
  TempDir dir;
  {
    auto channel = open_channel("file", dir, {});
    put(*channel, 0, 10);
    put(*channel, 10, 10);
    Take take = channel->take(20, Clock::now());
    REQUIRE(take.events == 20);
    // Any write that would grow a file fails with EFBIG from here on: the commit log's first
    // entry cannot be written. (SIGXFSZ would end the process: ignored, as the agent does not.)
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit saved{};
    getrlimit(RLIMIT_FSIZE, &saved);
    rlimit tiny = saved;
    tiny.rlim_cur = 16;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &tiny) == 0);
    CHECK_NOTHROW(channel->commit(take));
    setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, old_handler);
    CHECK(static_cast<SpillableChannel&>(*channel).spill_counters().disk_write_errors >= 2);
    CHECK(channel->counters().events_held == 0);
    put(*channel, 20, 5);  // and it goes on
    CHECK(drain_numbers(*channel) == range(20, 5));
  }
  // At least once: what the log could not record is delivered again after the restart.
  auto reopened = open_channel("file", dir, {});
  CHECK(drain_numbers(*reopened) == range(0, 20));
}

TEST_CASE("spillable channel configuration errors name the key", "[spill][channel]") {
  TempDir dir;
  CHECK_THROWS_WITH(kFileChannelSpec.make_channel(channel_component("file", dir, {{"memoryCapacity", "5"}})),
                    Catch::Contains("a.channels.c.memoryCapacity: a file channel keeps nothing in memory"));
  auto no_dir = test::component(config::Kind::channel, "c", "spillablememory", {});
  CHECK_THROWS_WITH(kSpillableChannelSpec.make_channel(no_dir), Catch::Contains("a.channels.c.dataDir: is missing"));
  auto first = open_channel("file", dir, {});
  auto second = kFileChannelSpec.make_channel(channel_component("file", dir, {}));
  CHECK_THROWS_WITH(second->open(),
                    Catch::Contains("a.channels.c.dataDir: ") && Catch::Contains("is in use by another agent"));
}

TEST_CASE("a source's acknowledger hears of each event's commit once, in memory, spilled, split and rolled back",
          "[spill][channel][ack]") {
  TempDir dir;
  auto channel = open_channel("spillablememory", dir, {{"memoryCapacity", "10"}});
  CHECK_FALSE(channel->puts_reach_disk());
  // One per batch: each counts its own batch's events from 0.
  const auto acknowledger = std::make_shared<test::RecordingAcknowledger>();
  const auto spilled_acknowledger = std::make_shared<test::RecordingAcknowledger>();
  EventBatch in_memory = test::acknowledged_batch(0, 10, acknowledger);
  REQUIRE(channel->put(in_memory, Clock::now() + 1s));
  EventBatch spilled = test::acknowledged_batch(10, 10, spilled_acknowledger);  // memory is full: to disk
  REQUIRE(channel->put(spilled, Clock::now() + 1s));
  REQUIRE(static_cast<SpillableChannel&>(*channel).spill_counters().events_spilled == 10);
  Take first = channel->take(15, Clock::now());  // all of memory and 5 of the record
  CHECK(acknowledger->times().empty());
  channel->rollback(std::move(first));
  CHECK(drain_numbers(*channel, 7) == range(0, 20));
  CHECK(acknowledger->times() == test::each_once(10));
  CHECK(spilled_acknowledger->times() == test::each_once(10));
}

TEST_CASE("a spilled record taken whole (read after the take's lock) keeps its acknowledger", "[spill][channel][ack]") {
  TempDir dir;
  auto channel = open_channel("spillablememory", dir, {{"memoryCapacity", "10"}});
  const auto acknowledger = std::make_shared<test::RecordingAcknowledger>();
  EventBatch in_memory = test::acknowledged_batch(0, 10, std::make_shared<test::RecordingAcknowledger>());
  REQUIRE(channel->put(in_memory, Clock::now() + 1s));
  EventBatch spilled = test::acknowledged_batch(10, 10, acknowledger);
  REQUIRE(channel->put(spilled, Clock::now() + 1s));
  CHECK(drain_numbers(*channel, 100) == range(0, 20));  // one take: memory, then the whole record
  CHECK(acknowledger->times() == test::each_once(10));
}

TEST_CASE("the file channel's puts reach the disk, its acknowledger hears of commits", "[spill][channel][ack]") {
  TempDir dir;
  auto channel = open_channel("file", dir, {});
  CHECK(channel->puts_reach_disk());
  const auto acknowledger = std::make_shared<test::RecordingAcknowledger>();
  EventBatch batch = test::acknowledged_batch(0, 10, acknowledger);
  REQUIRE(channel->put(batch, Clock::now() + 1s));
  CHECK(drain_numbers(*channel, 4) == range(0, 10));
  CHECK(acknowledger->times() == test::each_once(10));
}

TEST_CASE("a batch spilled to disk and read back keeps its arrival, one replayed after a restart has none",
          "[spill][channel][latency]") {
  TempDir dir;
  Clock::time_point spilled_arrival;
  {
    auto channel = open_channel("spillablememory", dir, {{"memoryCapacity", "10"}});
    put(*channel, 0, 10);
    EventBatch spilled = numbered_batch(10, 10);  // memory is full: to disk
    spilled_arrival = spilled.arrived_at();
    REQUIRE(channel->put(spilled, Clock::now() + 1s));
    REQUIRE(static_cast<SpillableChannel&>(*channel).spill_counters().events_spilled == 10);
    Take take = channel->take(20, Clock::now());
    REQUIRE(take.batches.size() == 2);
    CHECK(take.batches[1].arrived_at() == spilled_arrival);
    channel->rollback(std::move(take));
    channel->close();  // both on disk now
  }
  auto reopened = open_channel("spillablememory", dir, {{"memoryCapacity", "10"}});
  Take replayed = reopened->take(20, Clock::now());
  REQUIRE(replayed.events == 20);
  for (const EventBatch& b : replayed.batches) CHECK(b.arrived_at() == Clock::time_point{});
  reopened->commit(replayed);
}

TEST_CASE("a file channel's segment written before events had headers replays unchanged", "[spill][headers]") {
  // tests/data/segments-before-headers: what the agent of c00874f kept on disk at its stop, three
  // events read from one TCP connection with clientIPHeader = clientIP and portHeader = port.
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() + "/cp");
  std::filesystem::create_directories(dir.path() + "/data");
  const std::string fixture = test::source_path("tests/data/segments-before-headers/");
  std::filesystem::copy_file(fixture + "commits.v2.log", dir.path() + "/cp/commits.v2.log");
  std::filesystem::copy_file(fixture + "segment-0000000000000001.sls",
                             dir.path() + "/data/segment-0000000000000001.sls");
  auto channel = kSpillableChannelSpec.make_channel(test::component(
      config::Kind::channel, "c", "file",
      {{"checkpointDir", dir.path() + "/cp"}, {"dataDir", dir.path() + "/data"}, {"minimumRequiredSpace", "0"}}));
  channel->open();
  Take take = channel->take(100, Clock::now());
  REQUIRE(take.events == 3);
  std::vector<std::string> raw, hosts, client, ports, severities;
  char scratch[24];
  for (const EventBatch& b : take.batches)
    for (const EventRecord& e : b) {
      raw.emplace_back(b.raw(e));
      hosts.emplace_back(b.header(e, "host", scratch).value_or("<none>"));
      client.emplace_back(b.header(e, "clientIP", scratch).value_or("<none>"));
      ports.emplace_back(b.header(e, "port", scratch).value_or("<none>"));
      severities.emplace_back(b.header(e, "Severity", scratch).value_or("<none>"));
      CHECK(b.header_block(e).empty());
    }
  CHECK(raw == std::vector<std::string>{"<13>Dec  4 05:00:00 web01 app[42]: first event",
                                        "<165>1 2026-12-04T05:00:01.003Z host2 evntslog 7 ID47 [exampleSDID@32473 "
                                        "iut=\"3\"] second event",
                                        "not syslog at all"});
  CHECK(hosts == std::vector<std::string>{"web01", "host2", "<none>"});
  CHECK(client == std::vector<std::string>{"127.0.0.1", "127.0.0.1", "127.0.0.1"});
  CHECK(ports == std::vector<std::string>{"55140", "55140", "55140"});
  CHECK(severities == std::vector<std::string>{"5", "5", "5"});
  channel->commit(take);
}
