// Topics chosen by senders, end to end: 10,000 distinct names carried by syslog lines through
// topicHeader = app. allowedTopics and maxTopics bound what the agent keeps and what it may ask the
// cluster for; nothing is created in the cluster, and the agent's memory stays flat.

#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include <librdkafka/rdkafka.h>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

// Every topic the cluster at `bootstrap` has.
std::set<std::string> cluster_topics(const std::string& bootstrap) {
  char error[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), error, sizeof error);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  REQUIRE(rk);
  const rd_kafka_metadata_t* md = nullptr;
  std::set<std::string> topics;
  REQUIRE(rd_kafka_metadata(rk, 1, nullptr, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  for (int i = 0; i < md->topic_cnt; ++i) topics.insert(md->topics[i].topic);
  rd_kafka_metadata_destroy(md);
  rd_kafka_destroy(rk);
  return topics;
}

}  // namespace

TEST_CASE(
    "10,000 topic names from senders: memory stays flat, at most maxTopics kept, no topic created that "
    "allowedTopics does not allow or the cluster lacks",
    "[e2e][topics]") {
  const std::string agent = measured_agent();
  INFO(kNoMeasuredAgent);
  REQUIRE(!agent.empty());
  Pipeline p;
  p.use_agent_program(agent);
  // allowed-0 .. allowed-49 exist; allowed-50 .. allowed-4999 do not; other-N may not be used.
  std::vector<std::string> existing;
  for (int n = 0; n < 50; ++n) existing.push_back("allowed-" + std::to_string(n));
  p.start_broker(existing);
  const std::string lines = p.dir().file("names.txt");
  {
    std::ofstream out(lines);
    for (int n = 0; n < 5000; ++n) {
      out << "<134>Nov 30 11:07:06 web01 allowed-" << n << ": GET /index.html\n";
      out << "<134>Nov 30 11:07:06 web01 other-" << n << ": GET /index.html\n";
    }
  }
  const std::string config =
      "t.sources = r1\nt.channels = c1\nt.sinks = k1\n"
      "t.sources.r1.type = syslogtcp\nt.sources.r1.host = 127.0.0.1\nt.sources.r1.ports = 0\n"
      "t.sources.r1.channels = c1\n"
      "t.channels.c1.type = memory\nt.channels.c1.capacity = 20000\nt.channels.c1.transactionCapacity = 1000\n"
      "t.sinks.k1.type = kafka\nt.sinks.k1.channel = c1\nt.sinks.k1.brokerList = " +
      p.bootstrap() +
      "\nt.sinks.k1.topic = ApacheLog\nt.sinks.k1.topicHeader = app\n"
      "t.sinks.k1.allowedTopics = allowed-[0-9]+\nt.sinks.k1.maxTopics = 100\nt.sinks.k1.kafka.producer.acks = 1\n";
  p.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  p.wait_until_served();
  // Three passes over the 10,000 names; the agent's memory after the first against after the third.
  long rss_first = 0;
  for (int pass = 0; pass < 3; ++pass) {
    REQUIRE(p.send({"-c", "2", "-r", "10000", "-n", "10000", "--replay", lines}) == 0);
    REQUIRE(eventually([&] { return p.metric("sluice_channel_events") == 0; }, 60s, 200ms));
    CHECK(p.metric("sluice_sink_event_topics") <= 100);
    CHECK(p.metric("sluice_sink_kafka_topic_handles") <= 101);  // its own and the events' in use
    if (pass == 0) rss_first = p.agent_rss_kb();
  }
  const long rss_third = p.agent_rss_kb();
  INFO("RSS after the first pass " << rss_first << " kB, after the third " << rss_third << " kB");
  CHECK(rss_third < rss_first + rss_first / 10 + 4096);
  // Nothing created: the cluster has what it had.
  std::set<std::string> expected(existing.begin(), existing.end());
  expected.insert("ApacheLog");
  CHECK(cluster_topics(p.bootstrap()) == expected);
  // other-N went to the sink's own topic, counted; allowed-N the cluster lacks were discarded,
  // counted, or (while maxTopics names were in use) went to the sink's own topic too.
  CHECK(p.metric("sluice_sink_event_topics_refused_total{sink=\"k1\",reason=\"not_allowed\"}") == 15000);
  CHECK(p.metric("sluice_sink_delivery_errors_total{sink=\"k1\",reason=\"unknown_topic\"}") > 0);
  CHECK(p.stop_agent(30s) == 0);
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.in == 30000);
  CHECK(account.sent + account.discarded == 30000);
  CHECK(account.balances());
}
