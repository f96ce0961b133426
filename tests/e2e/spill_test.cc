// The spillable and file channels end to end: Kafka down for 30 s under load (memory overflows
// to disk, everything arrives), and SIGKILL with events on disk (they arrive after a restart).

#include <signal.h>

#include <catch2/catch.hpp>

#include <regex>
#include <thread>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

// Polls until the channel has accepted `events`, or 30 s.
void wait_until_put(Pipeline& p, double events) {
  eventually([&] { return p.metric("sluice_channel_events_put_total") >= events; }, 30s, 100ms);
  REQUIRE(p.metric("sluice_channel_events_put_total") == events);
}

}  // namespace

TEST_CASE("spillablememory with acks=all: Kafka down for 30 s under load and every event arrives", "[e2e][spill]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(with_channel(ten_sink_config(p.bootstrap(), kAcksAll),
                             "t.channels.c1.type = spillablememory\nt.channels.c1.memoryCapacity = 20000\n"
                             "t.channels.c1.transactionCapacity = 8000\nt.channels.c1.dataDir = " +
                                 p.dir().file("spill") + "\n"),
                "t", {"--metrics", "127.0.0.1:0"});
  // 38 s at 10,000 events/s: 300,000 arrive during the outage, 15 times the memory.
  CHECK(p.send_through_outage(3s, 30s, {"-c", "4", "-r", "10000", "-d", "38s"}) == 0);
  std::string report;
  const int verified = p.verify(report);
  INFO(report << p.agent_log());
  CHECK(verified == 0);
  CHECK_THAT(report, Catch::Contains(", missing 0"));
  // At least once, and only where the agent says so: a duplicate must be one it counted (sent,
  // answer lost, sent again).
  CHECK(duplicates_in(report) <= p.metric("sluice_sink_events_possibly_duplicated_total"));
  // The outage overflowed the memory part (20,000 events) to disk (about 300,000 events arrive in
  // it at 10,000/s), and the disk emptied. (How little the senders were held back meanwhile is
  // a rate: bench/run.sh measures it.)
  CHECK(p.metric("sluice_channel_events_spilled_total") > 20000);
  CHECK(eventually([&] { return p.metric("sluice_channel_disk_events") == 0; }, 10s, 100ms));
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("file channel: SIGKILL with every event on disk and after a restart all of them arrive", "[e2e][spill]") {
  Pipeline p;
  p.start_broker();
  const std::string config =
      with_channel(ten_sink_config(p.bootstrap(), kAcksAll),
                   "t.channels.c1.type = file\nt.channels.c1.transactionCapacity = 8000\nt.channels.c1.dataDir = " +
                       p.dir().file("spill") + "\n");
  p.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  p.wait_until_served();  // then the fault meets what its sinks take
  p.control_broker("down");
  REQUIRE(p.send({"-c", "4", "-n", "50000", "-r", "25000"}) == 0);
  wait_until_put(p, 50000);
  CHECK(p.metric("sluice_channel_disk_events") == 50000);
  p.agent().signal(SIGKILL);
  REQUIRE(p.agent().wait(10s).has_value());
  p.control_broker("up");
  p.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  CHECK_THAT(p.agent_log(), Catch::Contains("channel c1: 50000 events in"));
  std::string report;
  const int verified = p.verify(report);
  INFO(report << p.agent_log());
  CHECK(verified == 0);
  CHECK_THAT(report, Catch::Contains("unique 50000, duplicates 0, missing 0"));
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("spillablememory: SIGKILL loses exactly what memory held and no event that was on disk", "[e2e][spill]") {
  Pipeline p;
  p.start_broker();
  const std::string config = with_channel(ten_sink_config(p.bootstrap(), kAcksAll),
                                          "t.channels.c1.type = spillablememory\nt.channels.c1.memoryCapacity = 20000\n"
                                          "t.channels.c1.transactionCapacity = 8000\nt.channels.c1.dataDir = " +
                                              p.dir().file("spill") + "\n");
  p.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  p.wait_until_served();  // then the fault meets what its sinks take
  p.control_broker("down");
  REQUIRE(p.send({"-c", "4", "-n", "50000", "-r", "25000"}) == 0);
  wait_until_put(p, 50000);
  const double on_disk = p.metric("sluice_channel_disk_events");
  CHECK(on_disk >= 30000);  // memory holds at most 20,000
  p.agent().signal(SIGKILL);
  REQUIRE(p.agent().wait(10s).has_value());
  p.control_broker("up");
  p.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  std::string report;
  p.verify(report);
  INFO(report << p.agent_log());
  CHECK_THAT(report, Catch::Contains("unique " + std::to_string(static_cast<uint64_t>(on_disk)) + ", duplicates 0"));
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}
