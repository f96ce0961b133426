// librdkafka's statistics as Sluice reads them, and the stall watch that decides from them when
// a partition's messages stopped moving while the cluster answers.

#include <catch2/catch.hpp>

#include "sinks/kafka/stall_watch.h"
#include "sinks/kafka/statistics.h"

using namespace sluice;
using namespace sluice::kafka;
using namespace std::chrono_literals;

namespace {

// A report shaped as librdkafka writes it (STATISTICS.md), trimmed to the fields read.
constexpr const char* kReport = R"({
  "name": "rdkafka#producer-1", "type": "producer",
  "brokers": {
    "127.0.0.1:9092/bootstrap": {"name": "127.0.0.1:9092/bootstrap", "nodeid": -1, "state": "INIT",
                                 "rtt": {"avg": 0, "p99": 0}},
    "127.0.0.1:9092/1": {"name": "127.0.0.1:9092/1", "nodeid": 1, "state": "UP",
                         "rtt": {"avg": 2500, "p99": 12000}}
  },
  "topics": {
    "logs": {"topic": "logs", "partitions": {
      "0": {"partition": 0, "leader": 1, "msgq_cnt": 7, "xmit_msgq_cnt": 3, "msgs_inflight": 0, "txmsgs": 120},
      "1": {"partition": 1, "leader": -1, "msgq_cnt": 0, "xmit_msgq_cnt": 0, "msgs_inflight": 2, "txmsgs": 9},
      "4": {"partition": 4, "leader": -1, "msgq_cnt": 5, "xmit_msgq_cnt": 0, "msgs_inflight": 0, "txmsgs": 0,
            "unknown": true},
      "-1": {"partition": -1, "leader": -1, "msgq_cnt": 50, "xmit_msgq_cnt": 0, "msgs_inflight": 0, "txmsgs": 0}
    }}
  }
})";

// Partition 3 of "logs": `outstanding` of ours wait, `delivered` delivered so far; librdkafka and
// the cluster both name broker 1 its leader, which answers for it, unless the test says otherwise.
PartitionProgress partition(uint64_t outstanding, uint64_t delivered, int32_t client_leader = 1,
                            int32_t cluster_leader = 1) {
  return {.topic = "logs",
          .partition = 3,
          .outstanding = outstanding,
          .delivered = delivered,
          .client_leader = client_leader,
          .cluster_leader = cluster_leader,
          .served = cluster_leader >= 0};
}

ProgressReport report(PartitionProgress p, bool broker_up = true, bool cluster_answered = true) {
  return {.any_broker_up = broker_up, .cluster_answered = cluster_answered, .partitions = {std::move(p)}};
}

}  // namespace

TEST_CASE("statistics: brokers without bootstrap, partitions without the unassigned queue", "[kafka][stall]") {
  const auto stats = parse_statistics(kReport);
  REQUIRE(stats);
  REQUIRE(stats->brokers.size() == 1);
  CHECK(stats->brokers[0].name == "127.0.0.1:9092/1");
  CHECK(stats->brokers[0].id == 1);
  CHECK(stats->broker_down(7) == false);
  CHECK(stats->brokers[0].up);
  CHECK(stats->brokers[0].rtt_avg_seconds == Approx(0.0025));
  CHECK(stats->any_broker_up());
  REQUIRE(stats->partitions.size() == 3);
  CHECK(stats->partitions[0].topic == "logs");
  CHECK(stats->leader("logs", 0) == 1);
  CHECK(stats->leader("logs", 1) == -1);
  CHECK(stats->leader("logs", 9) == -1);  // not reported
  CHECK_FALSE(parse_statistics("{\"brokers\": [unclosed"));
}

TEST_CASE("stall watch: messages waiting and none delivered for the limit while the leader answers for it",
          "[kafka][stall]") {
  StallWatch watch(30s);
  const auto t0 = Clock::now();
  CHECK_FALSE(watch.observe(t0, report(partition(10, 5))));
  CHECK_FALSE(watch.observe(t0 + 29s, report(partition(10, 5))));
  const auto verdict = watch.observe(t0 + 30s, report(partition(12, 5)));
  REQUIRE(verdict);
  CHECK(*verdict == "logs [3]: 12 messages waiting, none delivered for 30 s while its leader 1 answers for it");
}

TEST_CASE("stall watch: librdkafka's leader not the cluster's (issue 5430) is a stall after 5 s", "[kafka][stall]") {
  StallWatch watch(30s);
  const auto t0 = Clock::now();
  CHECK_FALSE(watch.observe(t0, report(partition(10, 5, -1))));
  CHECK_FALSE(watch.observe(t0 + 4s, report(partition(10, 5, -1))));
  const auto verdict = watch.observe(t0 + 5s, report(partition(10, 5, -1)));
  REQUIRE(verdict);
  CHECK(
      *verdict ==
      "logs [3]: librdkafka sends it to leader none while the cluster's leader 1 answers for it (10 messages waiting, "
      "none delivered for 5 s)");
  StallWatch short_limit(1s);  // a limit below 5 s bounds the disagreement too
  CHECK_FALSE(short_limit.observe(t0, report(partition(10, 5, 2))));
  CHECK(short_limit.observe(t0 + 1s, report(partition(10, 5, 2))));
}

TEST_CASE("stall watch: not while messages are delivered, none wait, no leader answers, or in an outage",
          "[kafka][stall]") {
  const auto t0 = Clock::now();
  const auto never = [&](StallWatch& watch, auto report_at) {
    for (int s = 0; s <= 60; s += 5) CHECK_FALSE(watch.observe(t0 + std::chrono::seconds(s), report_at(s)));
  };
  SECTION("delivering") {
    StallWatch watch(10s);
    never(watch, [](int s) { return report(partition(10, static_cast<uint64_t>(s))); });
  }
  SECTION("nothing waits") {
    StallWatch watch(10s);
    never(watch, [](int) { return report(partition(0, 5)); });
  }
  SECTION("the cluster names no leader: the sink keeps its events aside, a new producer would not help") {
    StallWatch watch(10s);
    never(watch, [](int) { return report(partition(10, 5, -1, -1)); });
  }
  SECTION("its leader does not answer for it") {
    StallWatch watch(10s);
    never(watch, [](int) {
      PartitionProgress p = partition(10, 5);
      p.served = false;
      return report(p);
    });
  }
  SECTION("librdkafka cannot reach the leader: that broker's outage") {
    StallWatch watch(10s);
    never(watch, [](int) {
      PartitionProgress p = partition(10, 5, 2, 2);
      p.leader_down = true;
      return report(p);
    });
  }
  SECTION("an outage: every broker down") {
    StallWatch watch(10s);
    never(watch, [](int) { return report(partition(10, 5), false); });
  }
  SECTION("the cluster view is stale") {
    StallWatch watch(10s);
    never(watch, [](int) { return report(partition(10, 5, -1), true, false); });
  }
  SECTION("the cluster view stale for a while holds what it knew: the limit counts on from before") {
    StallWatch watch(10s);
    CHECK_FALSE(watch.observe(t0, report(partition(10, 5))));
    CHECK_FALSE(watch.observe(t0 + 6s, report(partition(10, 5), true, false)));  // stale: no verdict, no reset
    CHECK(watch.observe(t0 + 10s, report(partition(10, 5))));
  }
  SECTION("a limit of 0: never") {
    StallWatch watch(0s);
    never(watch, [](int) { return report(partition(10, 5, -1)); });
  }
}

TEST_CASE("stall watch: a delivery starts the count again", "[kafka][stall]") {
  StallWatch watch(10s);
  const auto t0 = Clock::now();
  CHECK_FALSE(watch.observe(t0, report(partition(10, 5))));
  CHECK_FALSE(watch.observe(t0 + 8s, report(partition(10, 5))));
  CHECK_FALSE(watch.observe(t0 + 9s, report(partition(10, 6))));  // one delivered
  CHECK_FALSE(watch.observe(t0 + 10s, report(partition(10, 6))));
  CHECK_FALSE(watch.observe(t0 + 12s, report(partition(10, 6), false)));  // the broker went
  CHECK_FALSE(watch.observe(t0 + 13s, report(partition(10, 6))));
  CHECK_FALSE(watch.observe(t0 + 22s, report(partition(10, 6))));
  CHECK(watch.observe(t0 + 23s, report(partition(10, 6))));
}
