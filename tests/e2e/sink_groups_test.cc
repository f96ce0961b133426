// Flume's sink groups in the running agent: a failover group across two Kafka clusters with the
// preferred one down for 20 s and back, and a load_balance group one of whose sinks cannot reach
// its cluster. Every event lands once; the metrics show who takes.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <regex>
#include <set>

#include "sinks/kafka/topic_reader.h"
#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

// Source r1 into channel c1, drained by sinks k1 and k2 (to `k1_brokers` and `k2_brokers`), in
// sink group g with `processor` lines; the sinks' producers have `producer` settings.
std::string grouped_agent(const std::string& k1_brokers, const std::string& k2_brokers, const std::string& processor,
                          const std::vector<std::string>& producer = kAcksAll) {
  std::string text =
      "t.sources = r1\nt.channels = c1\nt.sinks = k1 k2\nt.sinkgroups = g\nt.sinkgroups.g.sinks = k1 k2\n" + processor +
      "t.sources.r1.type = syslogtcp\nt.sources.r1.host = 127.0.0.1\nt.sources.r1.ports = 0 0\n"
      "t.sources.r1.channels = c1\n"
      "t.channels.c1.type = memory\nt.channels.c1.capacity = 200000\nt.channels.c1.transactionCapacity = 1000\n";
  for (const auto& [sink, brokers] : {std::pair{"k1", k1_brokers}, std::pair{"k2", k2_brokers}}) {
    const std::string k = std::string("t.sinks.") + sink;
    text += k + ".type = kafka\n" + k + ".channel = c1\n" + k + ".brokerList = " + brokers + "\n" + k +
            ".topic = ApacheLog\n";
    for (const std::string& line : producer) text += k + ".kafka.producer." + line + "\n";
    text += k + ".kafka.producer.message.timeout.ms = 3000\n";
  }
  return text;
}

// The load generator's events in `topic` at `bootstrap`, by their id (connection/sequence), counted.
void count_events(const std::string& bootstrap, std::map<std::string, uint64_t>& ids) {
  static const std::regex id("/lg/(\\d+/\\d+)\\?");
  sluice::kafka::TopicReader reader(bootstrap, "ApacheLog");
  reader.read_all(
      [&](int32_t, int64_t, int64_t, std::string_view payload) {
        std::match_results<std::string_view::const_iterator> m;
        if (std::regex_search(payload.begin(), payload.end(), m, id)) ++ids[m[1].str()];
      },
      sluice::kafka::ReadOptions{});
}

// 90,000 events over 45 s into a failover group whose preferred cluster goes down for 20 s, 5 s in.
// Returns the events stored twice; `missing` gets those stored nowhere, `possibly_lost` what the
// agent counted as such (acks=0).
void failover_with_an_outage(const std::vector<std::string>& producer, uint64_t& missing, uint64_t& possibly_lost,
                             uint64_t& duplicated) {
  Pipeline p;
  const std::string preferred = p.start_broker();
  ChildProcess backup({bin("sluice-kafka-mock"), "--topic", "ApacheLog", "--partitions", "10", "--bootstrap-file",
                       p.dir().file("bootstrap-b")},
                      p.dir().file("broker-b.log"));
  const std::string backup_text = wait_for_file(p.dir().file("bootstrap-b"), 20s);
  REQUIRE_FALSE(backup_text.empty());
  const std::string secondary = backup_text.substr(0, backup_text.find('\n'));
  p.start_agent(grouped_agent(preferred, secondary,
                              "t.sinkgroups.g.processor.type = failover\n"
                              "t.sinkgroups.g.processor.priority.k1 = 10\nt.sinkgroups.g.processor.priority.k2 = 5\n"
                              "t.sinkgroups.g.processor.maxpenalty = 5000\n",
                              producer),
                "t", {"--metrics", "127.0.0.1:0"});
  p.wait_until_served();
  const auto active = [&](const std::string& sink) {
    return p.metric("sluice_sinkgroup_sink_active{group=\"g\",sink=\"" + sink + "\"}") == 1;
  };
  CHECK(active("k1"));
  CHECK_FALSE(active("k2"));
  std::atomic<bool> switched{false}, returned{false};
  TestThread outage([&] {
    std::this_thread::sleep_for(5s);  // the schedule, not a synchronisation
    p.control_broker("down");
    switched = eventually([&] { return active("k2") && !active("k1"); }, 15s);
    std::this_thread::sleep_for(20s);
    p.control_broker("up");
    returned = eventually([&] { return active("k1") && !active("k2"); }, 20s);
  });
  REQUIRE(p.send({"-c", "2", "-r", "2000", "-n", "90000", "-d", "60s"}) == 0);
  outage.join();
  CHECK(switched);
  CHECK(returned);
  CHECK(p.metric("sluice_sinkgroup_failovers_total") >= 1);
  CHECK(p.metric("sluice_sinkgroup_sink_set_aside_total{group=\"g\",sink=\"k1\"}") >= 1);
  // Once the group has turned back, a second load (connection id 100) goes to the preferred
  // cluster alone: the return is judged by where events went, not by how long it took.
  REQUIRE(p.send({"-c", "1", "-r", "2000", "-n", "2000", "-d", "30s", "--first-connection", "100"}) == 0);
  // Everything sent reached the channel; once the channel is empty, every event is in one cluster
  // or the other (or, with acks=0, counted as possibly lost).
  CHECK(eventually([&] { return p.metric("sluice_channel_events") == 0; }, 60s, 200ms));
  std::map<std::string, uint64_t> on_preferred, on_backup;
  count_events(preferred, on_preferred);
  count_events(secondary, on_backup);
  std::map<std::string, uint64_t> ids = on_preferred;
  for (const auto& [id, count] : on_backup) ids[id] += count;
  duplicated = 0;
  for (const auto& [id, count] : ids) duplicated += count - 1;
  missing = 92000 - ids.size();
  const auto second_load = [](const std::map<std::string, uint64_t>& in) {
    return std::count_if(in.begin(), in.end(), [](const auto& entry) { return entry.first.starts_with("00100/"); });
  };
  INFO("on the backup " << on_backup.size() << " (second load " << second_load(on_backup) << "), on the preferred "
                        << on_preferred.size() << " (second load " << second_load(on_preferred) << ")");
  CHECK(on_backup.size() > 20000);
  CHECK(second_load(on_backup) == 0);
  CHECK(second_load(on_preferred) > 0);
  CHECK(p.stop_agent(30s) == 0);
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.lost == 0);
  CHECK(account.lost_after_handover == 0);
  CHECK(account.balances());
  possibly_lost = account.possibly_lost;
}

}  // namespace

TEST_CASE(
    "failover across two Kafka clusters: the preferred one down for 20 s, its sink set aside and back once it "
    "delivers, every event once",
    "[e2e][sinkgroups]") {
  uint64_t missing = 0, possibly_lost = 0, duplicated = 0;
  failover_with_an_outage(kAcksAll, missing, possibly_lost, duplicated);
  CHECK(missing == 0);
  CHECK(duplicated == 0);
}

TEST_CASE(
    "failover with acks=0: the preferred cluster down for 20 s, the group turns to the backup and back, nothing "
    "lost but what a dropped connection was counted as possibly taking",
    "[e2e][sinkgroups]") {
  // acks=0 in a group commits a take once librdkafka has written it: what the cluster that went
  // down did not get times out (message.timeout.ms), goes back to the channel and to the backup.
  uint64_t missing = 0, possibly_lost = 0, duplicated = 0;
  failover_with_an_outage({"acks = 0", "linger.ms = 5"}, missing, possibly_lost, duplicated);
  INFO("missing " << missing << ", possibly lost " << possibly_lost);
  CHECK(missing <= possibly_lost);
  CHECK(duplicated == 0);
}

TEST_CASE("load_balance with backoff: a sink that cannot reach its cluster is set aside, the other delivers all",
          "[e2e][sinkgroups]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(grouped_agent(p.bootstrap(), "127.0.0.1:9",
                              "t.sinkgroups.g.processor.type = load_balance\n"
                              "t.sinkgroups.g.processor.backoff = true\n"
                              "t.sinkgroups.g.processor.selector = round_robin\n"),
                "t", {"--metrics", "127.0.0.1:0"});
  REQUIRE(p.send({"-c", "2", "-r", "4000", "-n", "40000", "-d", "30s"}) == 0);
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 40000, duplicates 0, missing 0"));
  CHECK(p.metric("sluice_sinkgroup_sink_set_aside_total{group=\"g\",sink=\"k2\"}") >= 1);
  CHECK(p.metric("sluice_sinkgroup_sink_set_aside_total{group=\"g\",sink=\"k1\"}") == 0);
  CHECK(p.stop_agent(30s) == 0);
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.lost == 0);
  CHECK(account.balances());
}
