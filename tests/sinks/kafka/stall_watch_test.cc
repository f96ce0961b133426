// librdkafka's statistics as Sluice reads them, and the stall watch that decides from them when
// a partition's messages stopped moving while the cluster answers.

#include <catch2/catch.hpp>

#include <librdkafka/rdkafka.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "sinks/kafka/mock_cluster.h"
#include "sinks/kafka/stall_watch.h"
#include "sinks/kafka/statistics.h"
#include "tests/support/eventually.h"

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

namespace {

// What yaml-cpp (a full reader: YAML is a superset of JSON) makes of a report, the way Sluice
// read reports before it had its own one-pass reader: the reference the reader is held to.
ProducerStatistics read_with_yaml(const std::string& json) {
  ProducerStatistics stats;
  const YAML::Node root = YAML::Load(json);
  for (const auto& entry : root["brokers"]) {
    const YAML::Node b = entry.second;
    if (b["nodeid"].as<int32_t>(-1) < 0) continue;
    stats.brokers.push_back({.id = b["nodeid"].as<int32_t>(),
                             .name = b["name"].as<std::string>(""),
                             .up = b["state"].as<std::string>("") == "UP",
                             .rtt_avg_seconds = b["rtt"]["avg"].as<double>(0) / 1e6,
                             .rtt_p99_seconds = b["rtt"]["p99"].as<double>(0) / 1e6,
                             .disconnects = b["disconnects"].as<uint64_t>(0)});
  }
  for (const auto& topic : root["topics"])
    for (const auto& entry : topic.second["partitions"])
      if (const int32_t partition = entry.second["partition"].as<int32_t>(-1); partition >= 0)
        stats.partitions.push_back({.topic = topic.first.as<std::string>(),
                                    .partition = partition,
                                    .leader = entry.second["leader"].as<int32_t>(-1)});
  return stats;
}

void check_same(const ProducerStatistics& read, const ProducerStatistics& reference) {
  REQUIRE(read.brokers.size() == reference.brokers.size());
  for (size_t i = 0; i < read.brokers.size(); ++i) {
    CHECK(read.brokers[i].id == reference.brokers[i].id);
    CHECK(read.brokers[i].name == reference.brokers[i].name);
    CHECK(read.brokers[i].up == reference.brokers[i].up);
    CHECK(read.brokers[i].rtt_avg_seconds == Approx(reference.brokers[i].rtt_avg_seconds));
    CHECK(read.brokers[i].rtt_p99_seconds == Approx(reference.brokers[i].rtt_p99_seconds));
    CHECK(read.brokers[i].disconnects == reference.brokers[i].disconnects);
  }
  REQUIRE(read.partitions.size() == reference.partitions.size());
  for (size_t i = 0; i < read.partitions.size(); ++i) {
    CHECK(read.partitions[i].topic == reference.partitions[i].topic);
    CHECK(read.partitions[i].partition == reference.partitions[i].partition);
    CHECK(read.partitions[i].leader == reference.partitions[i].leader);
  }
}

int capture_report(rd_kafka_t*, char* json, size_t length, void* opaque) {
  auto* reports = static_cast<std::vector<std::string>*>(opaque);
  reports->emplace_back(json, length);
  return 0;
}

}  // namespace

TEST_CASE("statistics: librdkafka's own reports read in one pass as a full JSON reader reads them", "[kafka][stall]") {
  // Two brokers, two topics of 3 partitions, one of them without a leader: the reports of a
  // producer that sends to all of it, from its start (bootstrap brokers, no leaders known yet).
  kafka::MockCluster cluster(2);
  cluster.create_topic("logs", 3);
  cluster.create_topic("audit", 3);
  cluster.set_partition_leader("audit", 2, -1);
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::vector<std::string> reports;
  for (const auto& [name, value] :
       {std::pair{"bootstrap.servers", cluster.bootstrap_servers()}, {"statistics.interval.ms", std::string("100")}})
    REQUIRE(rd_kafka_conf_set(conf, name, value.c_str(), error, sizeof error) == RD_KAFKA_CONF_OK);
  rd_kafka_conf_set_stats_cb(conf, &capture_report);
  rd_kafka_conf_set_opaque(conf, &reports);
  rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  REQUIRE(producer);
  for (const char* topic : {"logs", "audit"})
    for (int32_t partition = 0; partition < 3; ++partition)
      rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
                        RD_KAFKA_V_VALUE(const_cast<char*>("event"), 5), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                        RD_KAFKA_V_END);
  REQUIRE(test::eventually(
      [&] {
        rd_kafka_poll(producer, 50);
        return reports.size() >= 5;
      },
      20s));
  rd_kafka_purge(producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_poll(producer, 0);
  rd_kafka_destroy(producer);

  bool saw_leaderless = false;
  for (const std::string& report : reports) {
    INFO(report);
    const auto read = parse_statistics(report.c_str());
    REQUIRE(read);
    const ProducerStatistics reference = read_with_yaml(report);
    check_same(*read, reference);
    saw_leaderless |= read->partitions.size() == 6 && read->leader("audit", 2) == -1 && read->leader("logs", 0) > 0;
  }
  CHECK(saw_leaderless);
}

TEST_CASE("statistics: a report cut anywhere, or not librdkafka's, is refused and changes nothing", "[kafka][stall]") {
  const std::string report = kReport;
  REQUIRE(parse_statistics(report.c_str()));
  for (size_t length = 0; length < report.size(); ++length)
    CHECK_FALSE(parse_statistics(report.substr(0, length).c_str()));
  CHECK_FALSE(parse_statistics(""));
  CHECK_FALSE(parse_statistics("[1, 2]"));
  CHECK_FALSE(parse_statistics("{\"brokers\": {}} trailing"));
  CHECK_FALSE(
      parse_statistics((std::string(100, '[') + std::string(100, ']')).insert(0, "{\"x\": ").append("}").c_str()));
  const auto escaped = parse_statistics(
      R"({"brokers": {"b": {"nodeid": 3, "name": "host\"q\\/\u00e9", "state": "UP", "rtt": {"avg": 1e3}}}, "topics": {}})");
  REQUIRE(escaped);
  REQUIRE(escaped->brokers.size() == 1);
  CHECK(escaped->brokers[0].name == "host\"q\\/?");
  CHECK(escaped->brokers[0].rtt_avg_seconds == Approx(0.001));
  CHECK(escaped->brokers[0].up);
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

TEST_CASE(
    "stall watch: librdkafka not back to the cluster that its own view has reached since is a stall after the limit, "
    "never before librdkafka's time to reconnect",
    "[kafka][stall]") {
  const auto t0 = Clock::now();
  // Partition 3's leader 2 as librdkafka sees it: connected to it, or not (and to no broker at all
  // when `any_up` is false); leader 2 last answered the cluster view for it at `answered`.
  const auto at = [&](bool reached, Clock::time_point answered, int32_t client_leader = 2, bool any_up = true) {
    PartitionProgress p = partition(10, 5, client_leader, 2);
    p.leader_down = !reached;
    p.leader_answered = answered;
    return report(p, any_up);
  };
  SECTION("an outage: the leader's last answer is from before librdkafka lost it") {
    StallWatch watch(30s, 15s);
    for (int s = 0; s <= 120; s += 5)
      CHECK_FALSE(watch.observe(t0 + std::chrono::seconds(s), at(false, t0 - 1s, 2, s % 10 == 0)));
  }
  SECTION("the broker back: librdkafka reconnects within its grace, no verdict") {
    StallWatch watch(5s, 15s);  // a limit below the grace: the grace rules
    CHECK_FALSE(watch.observe(t0, at(false, t0 - 1s)));
    for (int s = 37; s < 51; ++s) {
      const auto now = t0 + std::chrono::seconds(s);
      CHECK_FALSE(watch.observe(now, at(false, now, -1)));  // the leader answers; librdkafka not back, nor its leader
    }
    // Back at 51 s, its leader not known yet: judged from then, as is the wait (the limit, 5 s).
    CHECK_FALSE(watch.observe(t0 + 51s, at(true, t0 + 51s, -1)));
    CHECK_FALSE(watch.observe(t0 + 55s, at(true, t0 + 55s, -1)));
    const auto verdict = watch.observe(t0 + 56s, at(true, t0 + 56s, -1));
    REQUIRE(verdict);
    CHECK_THAT(*verdict,
               Catch::StartsWith("logs [3]: librdkafka sends it to leader none while the cluster's leader 2"));
  }
  SECTION("librdkafka never back to the leader: a stall once both the limit and the grace passed") {
    StallWatch watch(30s, 15s);
    CHECK_FALSE(watch.observe(t0, at(false, t0 - 1s)));
    CHECK_FALSE(watch.observe(t0 + 37s, at(false, t0 + 37s, -1)));
    CHECK_FALSE(watch.observe(t0 + 66s, at(false, t0 + 66s, -1)));  // its leader not judged meanwhile
    CHECK_FALSE(watch.take_wait_note());  // the watch's own to judge: no "no new producer" note
    const auto verdict = watch.observe(t0 + 67s, at(false, t0 + 67s, -1));
    REQUIRE(verdict);
    CHECK(*verdict ==
          "logs [3]: 10 messages waiting, none delivered; librdkafka has not reconnected to leader 2 for 67 s while "
          "that leader answers for it");
  }
  SECTION("librdkafka connected to no broker at all while the leader answers") {
    StallWatch watch(10s, 15s);
    CHECK_FALSE(watch.observe(t0, at(false, t0 - 1s, 2, false)));
    CHECK_FALSE(watch.observe(t0 + 1s, at(false, t0 + 1s, 2, false)));
    CHECK_FALSE(watch.observe(t0 + 15s, at(false, t0 + 15s, 2, false)));  // the limit passed, not the grace
    const auto verdict = watch.observe(t0 + 16s, at(false, t0 + 16s, 2, false));
    REQUIRE(verdict);
    CHECK(*verdict ==
          "logs [3]: 10 messages waiting, none delivered; librdkafka has been connected to no broker for 16 s while "
          "leader 2 answers for it");
  }
  SECTION("a longer grace (librdkafka's reconnect settings) is waited out") {
    StallWatch watch(10s, 65s);
    CHECK_FALSE(watch.observe(t0, at(false, t0 - 1s)));
    CHECK_FALSE(watch.observe(t0 + 1s, at(false, t0 + 1s)));
    CHECK_FALSE(watch.observe(t0 + 65s, at(false, t0 + 65s)));
    CHECK(watch.observe(t0 + 66s, at(false, t0 + 66s)));
  }
  SECTION("the leader's answer since the loss, but not lately (it went again): no verdict") {
    StallWatch watch(40s, 15s);  // an answer counts for 25 s: the count stops at 30 s
    CHECK_FALSE(watch.observe(t0, at(false, t0 - 1s)));
    for (int s = 5; s <= 120; s += 5)
      CHECK_FALSE(watch.observe(t0 + std::chrono::seconds(s), at(false, t0 + 5s)));  // answered once, at 5 s
  }
  SECTION("the leader's answer at the very report that saw the loss is no answer since") {
    StallWatch watch(10s, 15s);
    for (int s = 0; s <= 60; s += 5) CHECK_FALSE(watch.observe(t0 + std::chrono::seconds(s), at(false, t0)));
  }
  SECTION("the view silent again (an outage after all): the count starts over") {
    StallWatch watch(10s, 15s);
    CHECK_FALSE(watch.observe(t0, at(false, t0 - 1s)));
    CHECK_FALSE(watch.observe(t0 + 1s, at(false, t0 + 1s)));
    CHECK_FALSE(watch.observe(t0 + 14s, at(false, t0 + 1s)));  // no answer since 1 s: still recent, still counts
    ProgressReport stale = at(false, t0 + 1s, 2, false);       // connected to no broker, and the view silent
    stale.cluster_answered = false;
    CHECK_FALSE(watch.observe(t0 + 17s, stale));
    CHECK_FALSE(watch.observe(t0 + 20s, at(false, t0 + 20s)));
    CHECK_FALSE(watch.observe(t0 + 34s, at(false, t0 + 34s)));
    CHECK(watch.observe(t0 + 35s, at(false, t0 + 35s)));
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

TEST_CASE("stall watch: a wait it may not call a stall is said at the limit, then less and less often, with why",
          "[kafka][stall]") {
  const auto t0 = Clock::now();
  // The note after the report at t0 + s (and the note taken, as the producer does).
  const auto note_at = [&](StallWatch& watch, int s, const ProgressReport& r) {
    watch.observe(t0 + std::chrono::seconds(s), r);
    return watch.take_wait_note();
  };
  SECTION("an outage: said at the limit, then after twice as long each time") {
    StallWatch watch(30s);
    const ProgressReport outage = report(partition(10, 5), false);
    CHECK_FALSE(note_at(watch, 0, outage));
    CHECK_FALSE(note_at(watch, 29, outage));
    const auto note = note_at(watch, 30, outage);
    REQUIRE(note);
    CHECK(*note ==
          "logs [3]: 10 messages waiting, none delivered for 30 s; no new producer while librdkafka is connected to "
          "no broker (an outage; it reconnects by itself)");
    CHECK_FALSE(watch.take_wait_note());  // taken
    CHECK_FALSE(note_at(watch, 60, outage));
    CHECK_FALSE(note_at(watch, 89, outage));
    const auto again = note_at(watch, 90, outage);  // 60 s after the first
    REQUIRE(again);
    CHECK_THAT(*again, Catch::StartsWith("logs [3]: 10 messages waiting, none delivered for 90 s;"));
    CHECK_FALSE(note_at(watch, 209, outage));
    CHECK(note_at(watch, 210, outage));  // 120 s after the second
    StallWatch capped(30s);              // the interval stops growing at 10 min
    int said = 0;
    for (int s = 0; s <= 3000; s += 10) said += note_at(capped, s, outage) ? 1 : 0;
    CHECK(said == 8);  // at 30, 90, 210, 450, 930, 1530, 2130, 2730
  }
  SECTION("over: the next wait is said at the limit again") {
    StallWatch watch(10s);
    CHECK(note_at(watch, 0, report(partition(10, 5), false)).has_value() == false);
    CHECK(note_at(watch, 10, report(partition(10, 5), false)));
    CHECK_FALSE(note_at(watch, 11, report(partition(0, 15), false)));  // delivered: over
    CHECK_FALSE(note_at(watch, 12, report(partition(10, 15), false)));
    CHECK(note_at(watch, 22, report(partition(10, 15), false)));
  }
  SECTION("each condition that keeps the watch from a verdict, named; the outage first, then the view") {
    const auto why = [&](PartitionProgress p, bool broker_up = true, bool cluster_answered = true) {
      StallWatch watch(10s);
      note_at(watch, 0, report(p, broker_up, cluster_answered));
      const auto note = note_at(watch, 10, report(p, broker_up, cluster_answered));
      REQUIRE(note);
      return note->substr(note->find("no new producer while ") + 22);
    };
    CHECK(why(partition(10, 5, -1, -1)) == "the cluster names no leader for it");
    PartitionProgress unserved = partition(10, 5);
    unserved.served = false;
    CHECK(why(unserved) == "its leader 1 does not answer for it");
    PartitionProgress unreachable = partition(10, 5, 2, 2);
    unreachable.leader_down = true;
    CHECK(why(unreachable) == "librdkafka's connection to its leader 2 is down");
    CHECK(why(partition(10, 5), true, false) == "the cluster view has no recent answer");
    // A real outage: no broker, the leader's connection down, the view silent: the outage is named.
    CHECK(why(unreachable, false, false) ==
          "librdkafka is connected to no broker (an outage; it reconnects by itself)");
    CHECK(why(partition(10, 5, -1, -1), true, false) == "the cluster view has no recent answer");
  }
  SECTION("the longest wait is named with its own reason, and how many partitions waited the limit") {
    StallWatch watch(10s);
    PartitionProgress longest = partition(4, 7, -1, -1), shorter = partition(10, 5), also = partition(6, 1),
                      recent = partition(3, 2);
    longest.partition = 8;
    shorter.served = false;
    also.partition = 1;
    also.served = false;
    recent.partition = 5;
    recent.served = false;
    CHECK_FALSE(note_at(watch, 0, report(longest)));
    const ProgressReport three{.any_broker_up = true, .cluster_answered = true, .partitions = {shorter, longest, also}};
    CHECK_FALSE(note_at(watch, 5, three));
    // Neither the first nor the last of those that waited the limit is the longest.
    const ProgressReport all{
        .any_broker_up = true, .cluster_answered = true, .partitions = {shorter, longest, also, recent}};
    CHECK_FALSE(note_at(watch, 8, all));  // the fourth starts waiting
    const auto note = note_at(watch, 15, all);
    REQUIRE(note);
    CHECK(*note ==
          "logs [8]: 4 messages waiting, none delivered for 15 s; no new producer while the cluster names no leader "
          "for it (3 partitions wait so)");
  }
  SECTION("a broker that flaps while the messages wait does not start the intervals over") {
    StallWatch watch(10s);
    std::vector<int> at;
    for (int s = 0; s <= 35; ++s)
      if (note_at(watch, s, report(partition(10, 5), s % 2 == 1))) at.push_back(s);  // up on odd seconds
    CHECK(at == std::vector<int>{10, 30});
  }
  SECTION("not a word while messages are delivered, none wait, or the watch itself judges") {
    StallWatch delivering(10s), idle(10s), judging(10s);
    for (int s = 0; s <= 40; s += 5) {
      CHECK_FALSE(note_at(delivering, s, report(partition(10, static_cast<uint64_t>(s)), false)));
      CHECK_FALSE(note_at(idle, s, report(partition(0, 5), false)));
      judging.observe(t0 + std::chrono::seconds(s), report(partition(10, 5)));  // stalls at 10 s: its verdict
      CHECK_FALSE(judging.take_wait_note());
    }
  }
  SECTION("not in a report that gives a verdict: a new producer takes over") {
    StallWatch watch(10s);
    PartitionProgress leaderless = partition(4, 7, -1, -1);
    leaderless.partition = 8;
    const ProgressReport both{
        .any_broker_up = true, .cluster_answered = true, .partitions = {partition(10, 5), leaderless}};
    CHECK_FALSE(watch.observe(t0, both));
    CHECK_FALSE(watch.take_wait_note());
    CHECK(watch.observe(t0 + 10s, both));
    CHECK_FALSE(watch.take_wait_note());
  }
  SECTION("a delivery starts the count again") {
    StallWatch watch(10s);
    CHECK_FALSE(note_at(watch, 0, report(partition(10, 5), false)));
    CHECK_FALSE(note_at(watch, 8, report(partition(10, 6), false)));  // one delivered
    CHECK_FALSE(note_at(watch, 9, report(partition(10, 6), false)));  // the count starts
    CHECK_FALSE(note_at(watch, 18, report(partition(10, 6), false)));
    CHECK(note_at(watch, 19, report(partition(10, 6), false)));
  }
  SECTION("a limit of 0: never") {
    StallWatch watch(0s);
    for (int s = 0; s <= 60; s += 10) CHECK_FALSE(note_at(watch, s, report(partition(10, 5), false)));
  }
}
