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

PartitionStats waiting(int64_t queued, int64_t sent, int64_t in_flight = 0, int32_t leader = 1) {
  return {.topic = "logs", .partition = 3, .leader = leader, .queued = queued, .in_flight = in_flight, .sent = sent};
}

// Brokers 1 and 2: broker 1 up or not, broker 2 down.
ProducerStatistics report(PartitionStats partition, bool broker_up = true) {
  ProducerStatistics stats;
  stats.brokers.push_back({.id = 1, .name = "b/1", .up = broker_up});
  stats.brokers.push_back({.id = 2, .name = "b/2", .up = false});
  stats.partitions.push_back(std::move(partition));
  return stats;
}

}  // namespace

TEST_CASE("statistics: brokers without bootstrap, partitions without the unassigned queue or unknown ones",
          "[kafka][stall]") {
  const auto stats = parse_statistics(kReport);
  REQUIRE(stats);
  REQUIRE(stats->brokers.size() == 1);
  CHECK(stats->brokers[0].name == "127.0.0.1:9092/1");
  CHECK(stats->brokers[0].id == 1);
  CHECK(stats->broker_down(7) == false);
  CHECK(stats->brokers[0].up);
  CHECK(stats->brokers[0].rtt_avg_seconds == Approx(0.0025));
  CHECK(stats->any_broker_up());
  REQUIRE(stats->partitions.size() == 2);
  CHECK(stats->partitions[0].topic == "logs");
  CHECK(stats->partitions[0].partition == 0);
  CHECK(stats->partitions[0].queued == 10);
  CHECK(stats->partitions[0].sent == 120);
  CHECK(stats->partitions[0].leader == 1);
  CHECK(stats->partitions[1].leader == -1);
  CHECK(stats->partitions[1].in_flight == 2);
  CHECK_FALSE(parse_statistics("{\"brokers\": [unclosed"));
}

TEST_CASE("stall watch: messages waiting, none sent or in flight, a broker up, for the limit", "[kafka][stall]") {
  StallWatch watch(30s);
  const auto t0 = Clock::now();
  CHECK_FALSE(watch.observe(t0, report(waiting(10, 5))));
  CHECK_FALSE(watch.observe(t0 + 29s, report(waiting(10, 5))));
  const auto verdict = watch.observe(t0 + 30s, report(waiting(12, 5)));
  REQUIRE(verdict);
  CHECK(*verdict == "logs [3]: 12 messages waiting, none sent for 30 s while a broker is up (leader 1)");
  StallWatch leaderless(1s);
  CHECK_FALSE(leaderless.observe(t0, report(waiting(1, 0, 0, -1))));
  CHECK(leaderless.observe(t0 + 1s, report(waiting(1, 0, 0, -1))) ==
        "logs [3]: 1 messages waiting, none sent for 1 s while a broker is up (leader none)");
}

TEST_CASE("stall watch: not while messages move, none wait, some are in flight, or their broker is down",
          "[kafka][stall]") {
  const auto t0 = Clock::now();
  SECTION("sending") {
    StallWatch watch(10s);
    for (int s = 0; s <= 60; s += 5) CHECK_FALSE(watch.observe(t0 + std::chrono::seconds(s), report(waiting(10, s))));
  }
  SECTION("nothing waits") {
    StallWatch watch(10s);
    for (int s = 0; s <= 60; s += 5) CHECK_FALSE(watch.observe(t0 + std::chrono::seconds(s), report(waiting(0, 5))));
  }
  SECTION("in flight: the broker has them") {
    StallWatch watch(10s);
    for (int s = 0; s <= 60; s += 5)
      CHECK_FALSE(watch.observe(t0 + std::chrono::seconds(s), report(waiting(10, 5, 100))));
  }
  SECTION("its leader is a broker that is down: that broker's outage") {
    StallWatch watch(10s);
    for (int s = 0; s <= 60; s += 5)
      CHECK_FALSE(watch.observe(t0 + std::chrono::seconds(s), report(waiting(10, 5, 0, 2))));
  }
  SECTION("an outage: every broker down") {
    StallWatch watch(10s);
    for (int s = 0; s <= 60; s += 5)
      CHECK_FALSE(watch.observe(t0 + std::chrono::seconds(s), report(waiting(10, 5), false)));
  }
  SECTION("a limit of 0: never") {
    StallWatch watch(0s);
    for (int s = 0; s <= 60; s += 5) CHECK_FALSE(watch.observe(t0 + std::chrono::seconds(s), report(waiting(10, 5))));
  }
}

TEST_CASE("stall watch: any movement starts the count again", "[kafka][stall]") {
  StallWatch watch(10s);
  const auto t0 = Clock::now();
  CHECK_FALSE(watch.observe(t0, report(waiting(10, 5))));
  CHECK_FALSE(watch.observe(t0 + 8s, report(waiting(10, 5))));
  CHECK_FALSE(watch.observe(t0 + 9s, report(waiting(10, 6))));  // one sent
  CHECK_FALSE(watch.observe(t0 + 10s, report(waiting(10, 6))));
  CHECK_FALSE(watch.observe(t0 + 12s, report(waiting(10, 6), false)));  // the broker went
  CHECK_FALSE(watch.observe(t0 + 13s, report(waiting(10, 6))));
  CHECK_FALSE(watch.observe(t0 + 22s, report(waiting(10, 6))));
  CHECK(watch.observe(t0 + 23s, report(waiting(10, 6))));
}
