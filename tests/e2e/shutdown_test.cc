// Shutdown with Kafka down and every queue full, end to end: SIGTERM must end the agent by its
// --shutdown-timeout (4 s; waited for 15 s, half the default it would take without the flag) with
// its accounting line, for acks=0 and acks=all, with the memory
// channel (what it held is lost, and counted exactly) and the spillable one (what it held is
// kept on disk and delivered after a restart).

#include <signal.h>

#include <catch2/catch.hpp>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

struct Case {
  const char* acks;
  bool spillable;
};

void shutdown_with_kafka_down(const Case& c) {
  Pipeline p;
  p.start_broker();
  // Small librdkafka queues (1,000 messages per sink) so that they are full long before the
  // sender is done.
  std::vector<std::string> producer{std::string("acks = ") + c.acks, "queue.buffering.max.messages = 1000",
                                    "linger.ms = 5"};
  if (std::string(c.acks) == "all") producer.push_back("enable.idempotence = true");
  std::string config = ten_sink_config(p.bootstrap(), producer);
  if (c.spillable)
    config = with_channel(config,
                          "t.channels.c1.type = spillablememory\nt.channels.c1.memoryCapacity = 20000\n"
                          "t.channels.c1.transactionCapacity = 8000\nt.channels.c1.dataDir = " +
                              p.dir().file("spill") + "\n");
  const std::vector<std::string> args{"--metrics", "127.0.0.1:0", "--shutdown-timeout", "4s"};
  p.start_agent(config, "t", args);
  p.wait_until_served();  // then the fault meets what its sinks take
  p.control_broker("down");
  REQUIRE(p.send({"-c", "4", "-n", "50000", "-r", "25000"}) == 0);
  REQUIRE(eventually([&] { return p.metric("sluice_channel_events_put_total") >= 50000; }, 30s, 100ms));
  // acks=0: each sink hands batches over until its librdkafka queue is full (10 x 1,000), then
  // waits in produce. acks=all: each sink waits for the delivery of the take it sent.
  const double in_librdkafka = std::string(c.acks) == "0" ? 10000 : 10;
  REQUIRE(eventually([&] { return p.metric("sluice_sink_kafka_queue_messages") >= in_librdkafka; }, 30s, 100ms));

  const auto sigterm = std::chrono::steady_clock::now();
  p.agent().signal(SIGTERM);
  // Kafka stays down: only the --shutdown-timeout (4 s) can end the drain. Waited for 15 s: an
  // agent that took the default 30 s instead is not waited for.
  const std::optional<int> code = p.agent().wait(15s);
  const auto stop_took = std::chrono::steady_clock::now() - sigterm;
  const std::string log = p.agent_log();
  INFO(log);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  // Within T plus about two seconds (docs/running.md), and so at most the drain's deadline plus the
  // grace for requests in flight: nothing answers, nothing is in flight. (The sinks' cluster views once
  // added the question under way at the deadline: with no broker up, one waits its full 2 s.)
  INFO("the stop took " << std::chrono::duration_cast<std::chrono::milliseconds>(stop_took).count() << " ms");
  CHECK(stop_took < 4s + 2s);
  const ShutdownAccount a = shutdown_account(log);
  REQUIRE(a.found);
  CHECK(a.in == 50000);
  CHECK(a.balances());
  CHECK(a.sent + a.discarded < 50000);  // Kafka was down: most of it could not go

  p.control_broker("up");
  if (c.spillable) {
    // Nothing lost in the agent: the channel's memory went to disk, and the next start delivers it.
    CHECK(a.lost == 0);
    CHECK(a.kept > 0);
    p.start_agent(config, "t", args);
    std::string report;
    p.verify(report);
    INFO(report);
    if (std::string(c.acks) == "all") {
      CHECK(a.kept == 50000);  // acks=all: nothing was acknowledged, all of it was kept
      CHECK(missing_in(report) == 0);
    } else {
      // acks=0: what librdkafka held was handed over (committed) and then purged: lost, and
      // counted; the rest was kept.
      CHECK(a.kept + a.sent == 50000);
      CHECK(missing_in(report) == a.lost_after_handover);
    }
    CHECK(duplicates_in(report) <= a.possibly_duplicated);
    CHECK(p.stop_agent(30s) == std::optional<int>(0));
  } else {
    // The memory channel loses what it held at exit, and says exactly how much.
    CHECK(a.kept == 0);
    CHECK(a.lost > 0);
    std::string report;
    p.verify(report);
    INFO(report);
    CHECK(missing_in(report) == a.lost + a.lost_after_handover);
    CHECK(duplicates_in(report) == 0);
  }
}

}  // namespace

TEST_CASE("Kafka down, queues full, SIGTERM: out in time, every event accounted for (acks 0, memory channel)",
          "[e2e][shutdown]") {
  shutdown_with_kafka_down({"0", false});
}

TEST_CASE("Kafka down, queues full, SIGTERM: out in time, every event accounted for (acks all, memory channel)",
          "[e2e][shutdown]") {
  shutdown_with_kafka_down({"all", false});
}

TEST_CASE("Kafka down, queues full, SIGTERM: out in time, the channel kept on disk (acks 0, spillablememory)",
          "[e2e][shutdown]") {
  shutdown_with_kafka_down({"0", true});
}

TEST_CASE("Kafka down, queues full, SIGTERM: out in time, the channel kept on disk (acks all, spillablememory)",
          "[e2e][shutdown]") {
  shutdown_with_kafka_down({"all", true});
}
