// The Kafka sink in-process against the embedded mock cluster: routing and commit semantics.

#include <catch2/catch.hpp>

#include <librdkafka/rdkafka.h>

#include <map>
#include <set>
#include <thread>

#include "channels/memory/memory_channel.h"
#include "sinks/kafka/flume_event.h"
#include "sinks/kafka/kafka_environment.h"
#include "sinks/kafka/kafka_sink.h"
#include "sinks/kafka/mock_cluster.h"
#include "sinks/kafka/topic_reader.h"
#include "sources/syslog/syslog_parser.h"
#include "tests/support/component.h"
#include "tests/support/eventually.h"
#include "tests/support/parsed_batch.h"
#include "tests/support/test_thread.h"

using namespace sluice;
using sluice::test::parsed_batch;
using namespace std::chrono_literals;
using sluice::test::eventually;

namespace {

config::ComponentConfig sink_component(const std::string& bootstrap, std::map<std::string, std::string> properties) {
  properties.emplace("brokerList", bootstrap);
  properties.emplace("topic", "t");
  return test::component(config::Kind::sink, "k", "kafka", properties);
}

// A sink on its own channel and Kafka environment, against `cluster`.
struct SinkUnderTest {
  MemoryChannel channel{"c", MemoryChannelConfig{10000, 10000, {}, 20}};
  SharedState shared;
  BuildContext context{shared};
  std::unique_ptr<Sink> sink;
  SinkUnderTest(kafka::MockCluster& cluster, std::map<std::string, std::string> properties)
      : sink(kafka::kKafkaSinkSpec.make_sink(sink_component(cluster.bootstrap_servers(), std::move(properties)),
                                             channel, context)) {
    sink->start();
  }
};

// Until the sink's own destination is served (cluster_view.h): the sink takes nothing before, so a
// fault meant to meet its events is injected after.
void wait_until_served(SinkUnderTest& t) {
  REQUIRE(eventually([&] { return static_cast<const kafka::KafkaSink&>(*t.sink).kafka_counters().destination_served; },
                     10s));
}

// Puts the lines through a sink built from `properties`; returns payload → partition per topic.
std::map<std::string, std::map<std::string, int32_t>> route(kafka::MockCluster& cluster,
                                                            const std::vector<std::string>& topics,
                                                            std::map<std::string, std::string> properties,
                                                            const std::vector<std::string>& lines) {
  SinkUnderTest t(cluster, properties);
  auto& [channel, shared, context, sink] = t;
  EventBatch batch = parsed_batch(lines);
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  sink->stop(Clock::now() + 20s);
  REQUIRE(channel.counters().events_held == 0);
  std::map<std::string, std::map<std::string, int32_t>> landed;
  for (const std::string& topic : topics) {
    kafka::TopicReader reader(cluster.bootstrap_servers(), topic);
    reader.read_all([&](int32_t partition, int64_t, int64_t,
                        std::string_view payload) { landed[topic][std::string(payload)] = partition; },
                    kafka::ReadOptions{500ms, 30s});
  }
  return landed;
}

}  // namespace

TEST_CASE("keyField = host puts events in the partitions the Java producer's murmur2 picks", "[kafka][sink]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 10);
  // Kafka's UtilsTest.testMurmur2 vectors; Java's partition is (murmur2(key) & 0x7fffffff) % 10.
  const std::map<std::string, int32_t> java{{"21", 0},
                                            {"foobar", 6},
                                            {"a-little-bit-long-string", 2},
                                            {"a-little-bit-longer-string", 9},
                                            {"abc", 7},
                                            {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", 7}};
  std::vector<std::string> lines;
  for (const auto& [host, partition] : java) lines.push_back("<134>Nov 30 11:07:06 " + host + " app: from " + host);
  const auto landed = route(cluster, {"t"}, {{"keyField", "host"}, {"kafka.producer.acks", "all"}}, lines);
  for (const auto& [host, partition] : java) {
    INFO(host);
    CHECK(landed.at("t").at("app: from " + host) == partition);
  }
}

TEST_CASE("partitionIdHeader = Severity sends each event to the partition of its severity", "[kafka][sink]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 8);
  std::vector<std::string> lines;
  for (int severity = 0; severity < 8; ++severity)
    lines.push_back("<" + std::to_string(128 + severity) + ">Nov 30 11:07:06 h app: severity " +
                    std::to_string(severity));
  const auto landed = route(cluster, {"t"}, {{"partitionIdHeader", "Severity"}, {"kafka.producer.acks", "1"}}, lines);
  for (int severity = 0; severity < 8; ++severity)
    CHECK(landed.at("t").at("app: severity " + std::to_string(severity)) == severity);
}

TEST_CASE("topicHeader = app sends each event to its app's topic and the rest to the sink's topic", "[kafka][sink]") {
  kafka::MockCluster cluster;
  for (const char* topic : {"t", "alpha", "beta"}) cluster.create_topic(topic, 1);
  const auto landed = route(cluster, {"t", "alpha", "beta"}, {{"topicHeader", "app"}},
                            {"<134>Nov 30 11:07:06 h alpha: one", "<134>Nov 30 11:07:06 h alpha: two",
                             "<134>Nov 30 11:07:06 h beta: three", "no header at all"});
  CHECK(landed.at("alpha").size() == 2);
  CHECK(landed.at("beta").count("beta: three") == 1);
  CHECK(landed.at("t").count("no header at all") == 1);
}

TEST_CASE("kafka.headers sends the named fields as record headers, named as written, and leaves out absent ones",
          "[kafka][sink]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  for (const std::string acks : {"0", "all"}) {
    INFO("acks=" << acks);
    SinkUnderTest t(cluster, {{"kafka.headers", "Facility Severity host timestamp"}, {"kafka.producer.acks", acks}});
    EventBatch batch = parsed_batch({"<134>1 2026-12-02T10:00:00.000Z web01 app - - - first", "no header " + acks});
    REQUIRE(t.channel.put(batch, Clock::now() + 5s));
    t.sink->stop(Clock::now() + 20s);
    REQUIRE(t.channel.counters().events_held == 0);
  }
  std::map<std::string, std::vector<std::string>> headers_of;
  kafka::TopicReader reader(cluster.bootstrap_servers(), "t");
  reader.read_all(
      [&](int32_t, int64_t, int64_t, std::string_view payload) { headers_of[std::string(payload)] = reader.headers(); },
      kafka::ReadOptions{500ms, 30s});
  // (The parser alone, without the source's decoder, leaves APP-NAME and the rest in the body.)
  REQUIRE(headers_of.size() == 3);  // the first line twice (same payload), each "no header" line once
  CHECK(headers_of.at("app - - - first") ==
        std::vector<std::string>{"Facility=16", "Severity=6", "host=web01", "timestamp=1796205600000"});
  // No PRI, no host: user.notice and the time of arrival, no host header.
  for (const char* line : {"no header 0", "no header all"}) {
    const std::vector<std::string>& h = headers_of.at(line);
    REQUIRE(h.size() == 3);
    CHECK(h[0] == "Facility=1");
    CHECK(h[1] == "Severity=5");
    CHECK(h[2].starts_with("timestamp="));
  }
}

TEST_CASE(
    "headers interceptors set reach Kafka: the key header keys, %{header} fills the topic, kafka.headers and "
    "Flume's Avro event carry them",
    "[kafka][sink][headers]") {
  kafka::MockCluster cluster;
  for (const char* topic : {"logs-ams", "logs-"}) cluster.create_topic(topic, 1);
  // What a static interceptor (dc) and another setting Flume's key header would leave on events.
  EventBatchBuilder builder;
  for (const std::string& line :
       {std::string("<134>Nov 30 11:07:06 web01 app: one"), std::string("<134>Nov 30 11:07:06 web02 app: two")}) {
    syslog::parse_syslog(line, syslog::ParseClock::now(), builder.append(line));
    if (line.ends_with("two")) continue;  // the second has no headers of its own
    HeaderWriter headers;
    headers.set("dc", "ams");
    headers.set("key", "k-" + line.substr(line.size() - 3));
    headers.remove("host");
    builder.set_last_headers(headers.block());
  }
  EventBatch batch = builder.seal();
  for (const std::string acks : {"0", "all"}) {
    SinkUnderTest t(cluster, {{"topic", "logs-%{dc}"},
                              {"kafka.headers", "dc host Severity"},
                              {"useFlumeEventFormat", "true"},
                              {"kafka.producer.acks", acks}});
    EventBatch copy = batch;
    REQUIRE(t.channel.put(copy, Clock::now() + 5s));
    t.sink->stop(Clock::now() + 20s);
    REQUIRE(t.channel.counters().events_held == 0);
  }
  struct Landed {
    std::string key;
    std::vector<std::string> headers;
    kafka::FlumeEvent event;
  };
  std::map<std::string, std::vector<Landed>> by_topic;
  for (const char* topic : {"logs-ams", "logs-"}) {
    kafka::TopicReader reader(cluster.bootstrap_servers(), topic);
    reader.read_all(
        [&](int32_t, int64_t, int64_t, std::string_view payload) {
          const auto event = kafka::parse_flume_event(payload);
          REQUIRE(event);
          by_topic[topic].push_back({reader.key(), reader.headers(), *event});
        },
        kafka::ReadOptions{500ms, 30s});
  }
  REQUIRE(by_topic["logs-ams"].size() == 2);  // acks 0 and all
  REQUIRE(by_topic["logs-"].size() == 2);     // %{dc} missing: an empty string, as Flume
  const Landed& first = by_topic["logs-ams"][0];
  CHECK(first.key == "k-one");
  CHECK(first.headers == std::vector<std::string>{"dc=ams", "Severity=6"});  // host removed
  CHECK(first.event.body == "app: one");
  const auto has = [](const kafka::FlumeHeaders& headers, const std::string& name) {
    for (const auto& [n, v] : headers)
      if (n == name) return std::optional<std::string>(v);
    return std::optional<std::string>();
  };
  CHECK(has(first.event.headers, "dc") == "ams");
  CHECK(has(first.event.headers, "Facility") == "16");
  CHECK_FALSE(has(first.event.headers, "host"));
  const Landed& second = by_topic["logs-"][0];
  CHECK(second.key.empty());
  CHECK(has(second.event.headers, "host") == "web02");
  CHECK(second.headers == std::vector<std::string>{"host=web02", "Severity=6"});
}

TEST_CASE("a topic made only of %{header} sends an event without the header nowhere: discarded, counted, the rest land",
          "[kafka][sink][headers]") {
  kafka::MockCluster cluster;
  cluster.create_topic("alpha", 1);
  SinkUnderTest t(cluster, {{"topic", "%{app}"},
                            {"kafka.producer.acks", "all"},
                            {"kafka.producer.topic.metadata.propagation.max.ms", "500"}});
  EventBatch batch =
      parsed_batch({"<134>Nov 30 11:07:06 h alpha: one", "no app at all", "<134>Nov 30 11:07:06 h alpha: two"});
  REQUIRE(t.channel.put(batch, Clock::now() + 5s));
  t.sink->stop(Clock::now() + 20s);
  CHECK(t.channel.counters().events_held == 0);  // not retried for ever at the channel's head
  CHECK(t.sink->counters().events_discarded == 1);
  kafka::TopicReader reader(cluster.bootstrap_servers(), "alpha");
  size_t landed = 0;
  reader.read_all([&](int32_t, int64_t, int64_t, std::string_view) { ++landed; }, kafka::ReadOptions{500ms, 30s});
  CHECK(landed == 2);
}

TEST_CASE("acks=0 commits when librdkafka takes a batch but acks=all only after delivery", "[kafka][sink]") {
  for (const char* acks : {"0", "all"}) {
    INFO("acks=" << acks);
    kafka::MockCluster cluster;
    cluster.create_topic("t", 1);
    SinkUnderTest t(cluster, {{"kafka.producer.acks", acks}});
    auto& [channel, shared, context, sink] = t;
    wait_until_served(t);
    cluster.set_broker_down(0, true);
    EventBatch batch = parsed_batch({"<13>one", "<13>two", "<13>three"});
    REQUIRE(channel.put(batch, Clock::now() + 5s));
    REQUIRE(eventually([&] { return channel.counters().events_taken >= 3; }, 10s));
    // The fault: all three wait in librdkafka, which cannot reach the broker.
    REQUIRE(eventually([&] { return sink->counters().events_queued >= 3; }, 5s));
    // The broker is down: nothing can have been acknowledged. acks=0 commits on hand-over; acks=all
    // holds all three for as long as one cares to look.
    if (std::string(acks) == "0")
      CHECK(eventually([&] { return channel.counters().events_held == 0; }, 5s));
    else
      CHECK(channel.counters().events_held == 3);
    cluster.set_broker_down(0, false);
    sink->stop(Clock::now() + 20s);
    CHECK(channel.counters().events_held == 0);
    CHECK(sink->counters().events_sent == 3);
  }
}

TEST_CASE("events whose delivery failed go back to the channel and are retried until delivered once", "[kafka][sink]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  // Messages time out after 300 ms while the broker is down: their delivery reports fail.
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "all"},
                            {"kafka.producer.message.timeout.ms", "300"},
                            {"kafka.producer.reconnect.backoff.max.ms", "200"}});
  auto& [channel, shared, context, sink] = t;
  wait_until_served(t);
  cluster.set_broker_down(0, true);
  EventBatch batch = parsed_batch({"<13>one", "<13>two", "<13>three"});
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  // At least two attempts, with backoff between them.
  CHECK(eventually([&] { return sink->counters().events_rolled_back >= 6; }, 20s, 20ms));
  CHECK(channel.counters().events_held == 3);  // never committed while undelivered
  cluster.set_broker_down(0, false);
  CHECK(eventually([&] { return sink->counters().events_sent >= 3; }, 40s, 20ms));
  sink->stop(Clock::now() + 20s);
  CHECK(sink->counters().events_sent == 3);
  CHECK(channel.counters().events_held == 0);
  std::multiset<std::string> landed;
  kafka::TopicReader reader(cluster.bootstrap_servers(), "t");
  reader.read_all([&](int32_t, int64_t, int64_t, std::string_view payload) { landed.emplace(payload); },
                  kafka::ReadOptions{500ms, 30s});
  CHECK(landed == std::multiset<std::string>{"one", "two", "three"});
}

TEST_CASE("a full librdkafka queue makes the sink wait and deliver everything rather than drop", "[kafka][sink]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  std::set<std::string> landed;
  {
    SinkUnderTest t(cluster, {{"kafka.producer.acks", "0"}, {"kafka.producer.queue.buffering.max.messages", "10"}});
    wait_until_served(t);
    cluster.set_broker_down(0, true);  // so that the 10-message queue surely fills
    std::vector<std::string> lines;
    for (int i = 0; i < 2000; ++i) lines.push_back("<13>event " + std::to_string(i));
    EventBatch batch = parsed_batch(lines);
    REQUIRE(t.channel.put(batch, Clock::now() + 5s));
    REQUIRE(eventually([&] { return t.sink->counters().events_queued >= 10; }, 10s));  // the fault: full
    CHECK(t.channel.counters().events_held > 0);  // the rest waits in the channel, not dropped
    cluster.set_broker_down(0, false);
    t.sink->stop(Clock::now() + 30s);
    CHECK(t.channel.counters().events_held == 0);
  }
  kafka::TopicReader(cluster.bootstrap_servers(), "t")
      .read_all([&](int32_t, int64_t, int64_t, std::string_view payload) { landed.emplace(payload); },
                kafka::ReadOptions{500ms, 30s});
  CHECK(landed.size() == 2000);
}

namespace {

std::multiset<std::string> read_topic(kafka::MockCluster& cluster, const std::string& topic) {
  std::multiset<std::string> landed;
  kafka::TopicReader(cluster.bootstrap_servers(), topic)
      .read_all([&](int32_t, int64_t, int64_t, std::string_view payload) { landed.emplace(payload); },
                kafka::ReadOptions{500ms, 30s});
  return landed;
}

// Every one of `n` distinct payloads landed in the topic exactly once.
void check_landed_once(kafka::MockCluster& cluster, const std::string& topic, size_t n) {
  const std::multiset<std::string> landed = read_topic(cluster, topic);
  CHECK(landed.size() == n);
  CHECK(std::set<std::string>(landed.begin(), landed.end()).size() == n);
}

// "<13>event 0" ... "<13>event n-1".
std::vector<std::string> numbered_lines(int n) {
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) lines.push_back("<13>event " + std::to_string(i));
  return lines;
}

const kafka::KafkaSinkCounters kafka_counters(const Sink& sink) {
  return static_cast<const kafka::KafkaSink&>(sink).kafka_counters();
}

uint64_t failed_for(const Sink& sink, const std::string& reason) {
  for (const auto& [r, n] : kafka_counters(sink).failed_by_reason)
    if (r == reason) return n;
  return 0;
}

// Puts `n` events into the sink's channel and waits until the sink has taken them all.
void put_until_taken(SinkUnderTest& t, size_t n) {
  EventBatch batch = parsed_batch(std::vector<std::string>(n, "<13>waiting"));
  REQUIRE(t.channel.put(batch, Clock::now() + 5s));
  CHECK(eventually([&] { return t.sink->counters().events_taken == n; }, 10s));
}

}  // namespace

TEST_CASE("an explicit partition the topic lacks is discarded and counted, and the good events behind it arrive",
          "[kafka][sink][faults]") {
  // partitionIdHeader = Facility on a 10-partition topic: local0 (facility 16) has no partition.
  kafka::MockCluster cluster;
  cluster.create_topic("t", 10);
  std::vector<std::string> lines;
  size_t good = 0, bad = 0;
  for (int i = 0; i < 1030; ++i) {
    const bool local0 = i % 34 == 0;
    lines.push_back((local0 ? "<134>" : "<13>") + std::string("Nov 30 11:07:06 h app: event ") + std::to_string(i));
    (local0 ? bad : good)++;
  }
  SinkUnderTest t(cluster, {{"partitionIdHeader", "Facility"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch batch = parsed_batch(lines);
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  CHECK(eventually([&] { return channel.counters().events_held == 0; }, 20s));
  sink->stop(Clock::now() + 10s);
  const SinkCounters c = sink->counters();
  CHECK(c.events_sent == good);
  CHECK(c.events_discarded == bad);
  CHECK(failed_for(*sink, "unknown_partition") == bad);
  CHECK(c.events_rolled_back == 0);
  CHECK(read_topic(cluster, "t").size() == good);
}

TEST_CASE("the sink's own partition missing from the topic is waited for and its events kept, not discarded",
          "[kafka][sink][faults]") {
  // key = 12 on a 10-partition topic: every event of the sink would go; it is a misconfiguration
  // to log and wait for (backpressure), not a reason to drop everything.
  kafka::MockCluster cluster;
  cluster.create_topic("t", 10);
  SinkUnderTest t(cluster, {{"key", "12"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch batch = parsed_batch({"<13>one", "<13>two", "<13>three"});
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  // The cluster has answered (the view's round is 0.5 s while something is not served): still not taken.
  // The sink looked at its destination again and again (every 50 ms: some 2 s) and found it not
  // served: nothing was taken.
  REQUIRE(eventually([&] { return kafka_counters(*sink).unserved_looks >= 40; }, 30s));
  CHECK(sink->counters().events_taken == 0);
  CHECK_FALSE(kafka_counters(*sink).destination_served);
  sink->stop(Clock::now() + 2s);
  const SinkCounters c = sink->counters();
  CHECK(c.events_discarded == 0);
  CHECK(c.events_failed == 0);
  CHECK(channel.counters().events_held == 3);
}

TEST_CASE("with partitionIdHeader the sink's own topic missing is waited for and kept until it exists, not discarded",
          "[kafka][sink][faults]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 10);
  cluster.set_topic_error("t", 3 /* UNKNOWN_TOPIC_OR_PART */);
  SinkUnderTest t(cluster, {{"partitionIdHeader", "Facility"},
                            {"kafka.producer.topic.metadata.propagation.max.ms", "500"},
                            {"kafka.producer.topic.metadata.refresh.interval.ms", "500"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch batch = parsed_batch({"<13>one", "<13>two", "<13>three"});
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  // The sink looked at its destination again and again (every 50 ms: some 2 s) and found it not
  // served: nothing was taken.
  REQUIRE(eventually([&] { return kafka_counters(*sink).unserved_looks >= 40; }, 30s));
  CHECK(sink->counters().events_taken == 0);
  CHECK(sink->counters().events_discarded == 0);
  CHECK(channel.counters().events_held == 3);
  cluster.set_topic_error("t", 0);  // the topic appears: delivery starts by itself
  CHECK(eventually([&] { return sink->counters().events_sent == 3; }, 30s));
  sink->stop(Clock::now() + 5s);
  CHECK(read_topic(cluster, "t").size() == 3);
}

TEST_CASE("an event whose topic (from topicHeader) Kafka refuses as a name is discarded and the rest arrive",
          "[kafka][sink][faults]") {
  kafka::MockCluster cluster;
  for (const char* topic : {"t", "good"}) cluster.create_topic(topic, 1);
  cluster.set_topic_error("bad", 17 /* TOPIC_EXCEPTION: e.g. '/' in the name */);
  SinkUnderTest t(cluster, {{"topicHeader", "app"}, {"kafka.producer.topic.metadata.propagation.max.ms", "500"}});
  auto& [channel, shared, context, sink] = t;
  // "bad": the broker refuses it; "postfix/smtpd": not a topic name at all, refused without asking.
  EventBatch batch =
      parsed_batch({"<13>Nov 30 11:07:06 h good: one", "<13>Nov 30 11:07:06 h bad: two",
                    "<13>Nov 30 11:07:06 h good: three", "<13>Nov 30 11:07:06 h postfix/smtpd[42]: connect from x"});
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  CHECK(eventually([&] { return channel.counters().events_held == 0; }, 20s));
  sink->stop(Clock::now() + 5s);
  const SinkCounters c = sink->counters();
  CHECK(c.events_sent == 2);
  CHECK(c.events_discarded == 2);
  // "postfix/smtpd" is refused here, without asking: invalid_topic. "bad" is the broker's refusal,
  // or, when the metadata's propagation time runs out first (a slow run: TSan in CI), unknown_topic.
  CHECK(failed_for(*sink, "invalid_topic") >= 1);
  CHECK(failed_for(*sink, "invalid_topic") + failed_for(*sink, "unknown_topic") == 2);
  CHECK(read_topic(cluster, "good").size() == 2);
}

TEST_CASE("a topic that is not a Kafka topic name is refused at start naming the key", "[kafka][sink]") {
  CHECK_THROWS_WITH(kafka::parse_kafka_sink_config(sink_component("127.0.0.1:9", {{"topic", "web/logs"}})),
                    Catch::Contains("a.sinks.k.topic: \"web/logs\" is not a Kafka topic name"));
}

TEST_CASE("a fatal error of the idempotent producer makes a new producer that delivers every event once",
          "[kafka][sink][faults]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  // The first produce request fails with a sequence error at the head of the line: librdkafka
  // can no longer vouch for ordering or once-ness and raises a fatal error.
  cluster.push_request_errors(0, 1, 45 /* OUT_OF_ORDER_SEQUENCE_NUMBER */);
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "all"}, {"kafka.producer.enable.idempotence", "true"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch batch = parsed_batch(numbered_lines(100));
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  CHECK(eventually([&] { return sink->counters().events_sent == 100; }, 30s));
  sink->stop(Clock::now() + 10s);
  CHECK(kafka_counters(*sink).producer_restarts >= 1);
  CHECK(failed_for(*sink, "producer_fatal") + failed_for(*sink, "purged") > 0);
  CHECK(channel.counters().events_held == 0);
  check_landed_once(cluster, "t", 100);
}

TEST_CASE("a pinned partition without a leader is waited for, not a stall: delivered once it has one",
          "[kafka][sink][faults]") {
  // Partition 0 has no leader while its broker answers: the cluster says so, the sink takes nothing
  // for it and makes no new producer (one would not help).
  kafka::MockCluster cluster;
  cluster.create_topic("t", 2);
  cluster.set_partition_leader("t", 0, -1);
  SinkUnderTest t(cluster, {{"key", "0"}, {"kafka.producer.acks", "all"}, {"stalledPartitionTimeout", "1s"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch batch = parsed_batch(numbered_lines(100));
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  // The sink looked at its destination again and again (every 50 ms: some 2 s) and found it not
  // served: nothing was taken.
  REQUIRE(eventually([&] { return kafka_counters(*sink).unserved_looks >= 40; }, 30s));
  CHECK(sink->counters().events_taken == 0);
  CHECK(kafka_counters(*sink).producer_restarts == 0);
  cluster.set_partition_leader("t", 0, 1);
  CHECK(eventually([&] { return sink->counters().events_sent == 100; }, 30s));
  sink->stop(Clock::now() + 10s);
  CHECK(channel.counters().events_held == 0);
  check_landed_once(cluster, "t", 100);
}

#ifdef SLUICE_RDKAFKA_PINNED  // the mock's answers for a partition without a leader are the pinned librdkafka's
                              // (patched)
TEST_CASE("a partition that loses its leader under load and gets it back is delivered to again, every event once",
          "[kafka][sink][faults]") {
  // librdkafka issue 5430's trigger: produce answers naming no leader (CurrentLeader -1) for a
  // partition the producer was sending to, then the leader back. (The mock answers so with the
  // patch .ci/librdkafka applies; the client's part of that patch takes such an answer in.)
  for (const char* acks : {"all", "1"}) {
    INFO("acks=" << acks);
    kafka::MockCluster cluster(2);
    cluster.create_topic("t", 2);
    SinkUnderTest t(cluster, {{"key", "0"},
                              {"kafka.producer.acks", acks},
                              {"batchSize", "50"},
                              {"kafka.producer.linger.ms", "5"},
                              {"stalledPartitionTimeout", "2s"}});
    auto& [channel, shared, context, sink] = t;
    wait_until_served(t);
    std::atomic<int> put{0};
    std::atomic<bool> done{false};
    test::TestThread sender([&] {  // 2,000 events/s for 4 s
      for (int i = 0; i < 8000 && !done; ++i) {
        EventBatch batch = parsed_batch({"<13>event " + std::to_string(i)});
        if (channel.put(batch, Clock::now() + 5s)) ++put;
        if (i % 10 == 9) std::this_thread::sleep_for(5ms);  // the load's pace, not a synchronisation
      }
    });
    REQUIRE(eventually([&] { return sink->counters().events_sent > 500; }, 10s));
    cluster.set_partition_leader("t", 0, -1);
    REQUIRE(eventually([&] { return put.load() > 3000; }, 20s));
    cluster.set_partition_leader("t", 0, 2);  // another broker leads it now
    sender.join();
    CHECK(eventually([&] { return sink->counters().events_sent == static_cast<uint64_t>(put.load()); }, 30s));
    sink->stop(Clock::now() + 10s);
    CHECK(channel.counters().events_held == 0);
    check_landed_once(cluster, "t", static_cast<size_t>(put.load()));
  }
}
#endif

TEST_CASE("a partition its leader answers for but that delivers nothing for the limit makes a new producer",
          "[kafka][sink][faults]") {
  // Every produce request refused as if the broker did not lead the partition, while metadata and
  // ListOffsets say it does: librdkafka retries and delivers nothing; after stalledPartitionTimeout
  // a new producer takes over (what the old one held goes back to the channel, unsent), and once the
  // refusals end every event is delivered once.
  // acks=1 and acks=all alike (with acks=0 the broker answers no produce, so it cannot refuse one).
  const std::string acks = GENERATE("all", "1");
  INFO("acks=" << acks);
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  SinkUnderTest t(cluster, {{"key", "0"},
                            {"kafka.producer.acks", acks},
                            {"kafka.producer.retry.backoff.ms", "100"},
                            {"kafka.producer.retry.backoff.max.ms", "100"},
                            {"stalledPartitionTimeout", "1s"}});
  auto& [channel, shared, context, sink] = t;
  wait_until_served(t);
  cluster.push_request_errors(0, 40, 6 /* NOT_LEADER_OR_FOLLOWER */);
  EventBatch batch = parsed_batch(numbered_lines(100));
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  CHECK(eventually([&] { return kafka_counters(*sink).producer_restarts >= 1; }, 20s));
  CHECK(eventually([&] { return sink->counters().events_sent == 100; }, 60s));
  sink->stop(Clock::now() + 10s);
  CHECK(channel.counters().events_held == 0);
  check_landed_once(cluster, "t", 100);
}

TEST_CASE("a pinned partition of a topic that does not exist is waited for, not a stall", "[kafka][sink][faults]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  cluster.set_topic_error("t", 3 /* UNKNOWN_TOPIC_OR_PART */);
  SinkUnderTest t(cluster, {{"key", "0"}, {"stalledPartitionTimeout", "1s"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch batch = parsed_batch({"<13>one", "<13>two"});
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  // The sink looked at its destination again and again (every 50 ms: some 2 s) and found it not
  // served: nothing was taken.
  REQUIRE(eventually([&] { return kafka_counters(*sink).unserved_looks >= 40; }, 30s));
  CHECK(sink->counters().events_taken == 0);
  CHECK(kafka_counters(*sink).producer_restarts == 0);
  CHECK_FALSE(kafka_counters(*sink).destination_served);
  sink->stop(Clock::now() + 2s);
  CHECK(channel.counters().events_held == 2);
}

TEST_CASE("acks=0: a connection the broker closes while it stays up counts what was written to it as possibly lost",
          "[kafka][sink][faults]") {
  // The broker closes its connections and takes new ones 50 ms later, before librdkafka tries
  // again (reconnect.backoff.ms 1 s, less a quarter at most): no connection fails, so librdkafka
  // raises no error, and only its statistics' count of disconnects can tell.
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "0"},
                            {"kafka.producer.reconnect.backoff.ms", "1000"},
                            {"kafka.producer.reconnect.backoff.max.ms", "1000"},
                            {"kafka.producer.linger.ms", "5"}});
  auto& [channel, shared, context, sink] = t;
  wait_until_served(t);
  put_until_taken(t, 200);
  // Written (their reports served: librdkafka holds none): with acks=0 "sent" is counted when
  // librdkafka takes them, and a close before they are written would leave them queued for the next
  // connection, nothing lost, nothing to count.
  REQUIRE(eventually([&] { return sink->counters().events_sent == 200 && sink->counters().events_queued == 0; }, 10s));
  CHECK(sink->counters().events_possibly_lost == 0);
  cluster.set_broker_down(0, true);
  std::this_thread::sleep_for(50ms);  // the fault's length, not a synchronisation
  cluster.set_broker_down(0, false);
  CHECK(eventually([&] { return sink->counters().events_possibly_lost > 0; }, 5s));
  CHECK(sink->counters().events_possibly_lost <= 200);
  EventBatch after = parsed_batch(numbered_lines(100));
  REQUIRE(channel.put(after, Clock::now() + 5s));
  CHECK(eventually([&] { return sink->counters().events_sent == 300; }, 10s));
  sink->stop(Clock::now() + 10s);
}

TEST_CASE("with Kafka down at start nothing is taken, and once it is up every event lands once (acks=0)",
          "[kafka][sink][faults]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 2);
  cluster.set_broker_down(0, true);
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "0"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch batch = parsed_batch(numbered_lines(500));
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  // Handed over with acks=0 they would be the producer's, lost if the broker never read them.
  // The sink looked at its destination again and again (every 50 ms: some 2 s) and found it not
  // served: nothing was taken.
  REQUIRE(eventually([&] { return kafka_counters(*sink).unserved_looks >= 40; }, 30s));
  CHECK(sink->counters().events_taken == 0);
  CHECK_FALSE(kafka_counters(*sink).destination_served);
  cluster.set_broker_down(0, false);
  CHECK(eventually([&] { return sink->counters().events_sent == 500; }, 30s));
  sink->stop(Clock::now() + 10s);
  CHECK(channel.counters().events_held == 0);
  CHECK(sink->counters().events_lost_after_handover == 0);
  check_landed_once(cluster, "t", 500);
}

TEST_CASE(
    "with Kafka down and librdkafka's queue full, stop at its deadline purges the queue (counted) and what was not "
    "taken stays in the channel (acks=0)",
    "[kafka][sink][faults][shutdown]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "0"}, {"kafka.producer.queue.buffering.max.messages", "10"}});
  auto& [channel, shared, context, sink] = t;
  wait_until_served(t);
  cluster.set_broker_down(0, true);
  put_until_taken(t, 100);
  REQUIRE(eventually([&] { return sink->counters().events_queued >= 10; }, 5s));  // the fault: the queue is full
  // The verdict is what the deadline did (a stop that never returned would fail at the test's own
  // timeout): librdkafka's queue purged and counted, the rest left in the channel.
  sink->stop(Clock::now() + 1s);
  const SinkCounters c = sink->counters();
  CHECK(c.events_sent == 10);  // handed over: what acks=0 promises, then purged (counted)
  CHECK(failed_for(*sink, "purged") == 10);
  CHECK(channel.counters().events_held == 90);  // never taken by librdkafka: still the channel's
}

TEST_CASE("with Kafka down, stop with acks=all ends at its deadline with every event still in the channel",
          "[kafka][sink][faults][shutdown]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "all"}, {"kafka.producer.enable.idempotence", "true"}});
  auto& [channel, shared, context, sink] = t;
  wait_until_served(t);
  cluster.set_broker_down(0, true);
  put_until_taken(t, 50);
  REQUIRE(eventually([&] { return sink->counters().events_queued >= 50; }, 5s));  // the fault: nothing can leave
  sink->stop(Clock::now() + 1s);  // (what the deadline did is the verdict, below)
  const SinkCounters c = sink->counters();
  CHECK(c.events_sent == 0);
  CHECK(c.events_possibly_duplicated == 0);  // never sent: the broker cannot have them
  CHECK(channel.counters().events_held == 50);
}

TEST_CASE("requests still in flight at the shutdown deadline are purged last and counted as possibly duplicated",
          "[kafka][sink][faults][shutdown]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "all"}, {"kafka.producer.enable.idempotence", "true"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch first = parsed_batch({"<13>connected"});  // connection and metadata in place
  REQUIRE(channel.put(first, Clock::now() + 5s));
  REQUIRE(eventually([&] { return sink->counters().events_sent == 1; }, 10s));
  cluster.set_broker_rtt(0, 4000);  // the broker stores at once but answers 4 s later
  std::vector<std::string> lines;
  for (int i = 0; i < 20; ++i) lines.push_back("<13>event " + std::to_string(i));
  EventBatch batch = parsed_batch(lines);
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  CHECK(eventually([&] { return sink->counters().events_taken == 21; }, 10s));
  sink->stop(Clock::now() + 500ms);  // then 1 s of grace for the requests in flight
  const SinkCounters c = sink->counters();
  CHECK(c.events_sent == 1);
  CHECK(c.events_possibly_duplicated == 20);
  CHECK(channel.counters().events_held == 20);  // at least once: they go again after a restart
  // And the broker did store them: sending them again would duplicate them, which is why
  // they are counted.
  cluster.set_broker_rtt(0, 0);
  CHECK(read_topic(cluster, "t").size() == 21);
}

TEST_CASE("with maxTakesInFlight 4 a sink keeps four takes waiting for their reports and delivers them all once",
          "[kafka][sink]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "all"},
                            {"kafka.producer.enable.idempotence", "true"},
                            {"batchSize", "10"},
                            {"maxTakesInFlight", "4"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch warm = parsed_batch({"<13>connected"});
  REQUIRE(channel.put(warm, Clock::now() + 5s));
  REQUIRE(eventually([&] { return sink->counters().events_sent == 1; }, 10s));
  cluster.set_broker_rtt(0, 4000);  // answers come 4 s late: the window fills meanwhile
  std::vector<std::string> lines;
  for (int i = 0; i < 60; ++i) lines.push_back("<13>event " + std::to_string(i));
  EventBatch batch = parsed_batch(lines);
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  REQUIRE(eventually([&] { return sink->counters().events_taken == 41; }, 10s));  // 4 takes of 10
  CHECK(sink->counters().events_sent == 1);  // all four in flight at once: none answered yet
  // A fifth take only once an answer has freed a place in the window: by then that take's
  // events count as sent (the sink's thread settles, then takes).
  REQUIRE(eventually([&] { return sink->counters().events_taken > 41; }, 20s));
  CHECK(sink->counters().events_sent >= 11);
  cluster.set_broker_rtt(0, 0);
  CHECK(eventually([&] { return sink->counters().events_sent == 61; }, 20s));
  sink->stop(Clock::now() + 5s);
  check_landed_once(cluster, "t", 61);
}

TEST_CASE("with maxTakesInFlight 3 and every take failing, the channel gets them back in the order taken",
          "[kafka][sink][faults]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "all"},
                            {"batchSize", "10"},
                            {"maxTakesInFlight", "3"},
                            {"kafka.producer.message.timeout.ms", "300"},
                            {"kafka.producer.reconnect.backoff.max.ms", "200"}});
  auto& [channel, shared, context, sink] = t;
  wait_until_served(t);
  cluster.set_broker_down(0, true);
  std::vector<std::string> lines;
  for (int i = 0; i < 30; ++i) lines.push_back("<13>event " + std::to_string(i));
  EventBatch batch = parsed_batch(lines);
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  // Three takes of 10 in flight, all timing out in one pass of librdkafka's timeout scan; stopped
  // within the 100 ms backoff that follows, before a second round (which would put a reversed
  // order right again).
  REQUIRE(eventually([&] { return sink->counters().events_rolled_back >= 30; }, 20s, 1ms));
  sink->stop(Clock::now());
  REQUIRE(channel.counters().events_held == 30);
  Take back = channel.take(30, Clock::now() + 1s);
  std::vector<std::string> order;
  for (const EventBatch& b : back.batches)
    for (const EventRecord& e : b) order.emplace_back(b.body(e));
  std::vector<std::string> expected;
  for (int i = 0; i < 30; ++i) expected.push_back("event " + std::to_string(i));
  CHECK(order == expected);
}

namespace {

// Every topic the cluster has, as its metadata lists them.
std::set<std::string> cluster_topics(kafka::MockCluster& cluster) {
  char error[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", cluster.bootstrap_servers().c_str(), error, sizeof error);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  REQUIRE(rk);
  const rd_kafka_metadata_t* md = nullptr;
  std::set<std::string> topics;
  if (rd_kafka_metadata(rk, 1, nullptr, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < md->topic_cnt; ++i) topics.insert(md->topics[i].topic);
    rd_kafka_metadata_destroy(md);
  }
  rd_kafka_destroy(rk);
  return topics;
}

// `n` events of app `app` (its syslog tag, which topicHeader = app reads), numbered.
EventBatch app_events(const std::string& app, int n) {
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) lines.push_back("<13>Nov 30 11:07:06 h " + app + ": event " + std::to_string(i));
  return parsed_batch(lines);
}

}  // namespace

TEST_CASE(
    "topics named by events: at most maxTopics kept, one allowedTopics does not match goes to the sink's topic, none "
    "created",
    "[kafka][sink][topics]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  for (int k = 1; k <= 20; ++k) cluster.create_topic("app-" + std::to_string(k), 1);
  SinkUnderTest t(
      cluster,
      {{"topicHeader", "app"}, {"allowedTopics", "app-[0-9]+"}, {"maxTopics", "5"}, {"kafka.producer.acks", "all"}});
  auto& [channel, shared, context, sink] = t;
  wait_until_served(t);
  // Twenty topics, one after the other: the least recently used is let go for each new one.
  for (int k = 1; k <= 20; ++k) {
    EventBatch batch = app_events("app-" + std::to_string(k), 10);
    REQUIRE(channel.put(batch, Clock::now() + 5s));
    REQUIRE(eventually([&] { return channel.counters().events_held == 0; }, 10s));
    CHECK(kafka_counters(*sink).event_topics <= 5);
  }
  // Names it may not use: to its own topic, counted. Names it may use that the cluster does not
  // have: discarded, counted (the producer asks Kafka to create none of them).
  EventBatch evil = app_events("evil", 7);
  REQUIRE(channel.put(evil, Clock::now() + 5s));
  EventBatch missing = app_events("app-9999", 3);
  REQUIRE(channel.put(missing, Clock::now() + 5s));
  REQUIRE(eventually([&] { return channel.counters().events_held == 0; }, 10s));
  sink->stop(Clock::now() + 10s);
  for (int k = 1; k <= 20; ++k) CHECK(read_topic(cluster, "app-" + std::to_string(k)).size() == 10);
  CHECK(read_topic(cluster, "t").size() == 7);
  CHECK(failed_for(*sink, "unknown_topic") == 3);
  CHECK(sink->counters().events_discarded == 3);
  const std::set<std::string> topics = cluster_topics(cluster);
  CHECK(topics.size() == 21);
  CHECK_FALSE(topics.count("app-9999"));
  CHECK_FALSE(topics.count("evil"));
}

TEST_CASE(
    "deadLetterTopic: one too large (cut to deadLetterMaxBytes) and two naming refused topics go there, the "
    "rest to their topics",
    "[kafka][sink][faults][dead-letter]") {
  kafka::MockCluster cluster;
  for (const char* topic : {"t", "good", "dlq"}) cluster.create_topic(topic, 1);
  cluster.set_topic_error("bad", 17 /* TOPIC_EXCEPTION */);
  SinkUnderTest t(cluster, {{"topicHeader", "app"},
                            {"kafka.producer.acks", "all"},
                            {"kafka.producer.message.max.bytes", "1000"},
                            {"kafka.producer.topic.metadata.propagation.max.ms", "500"},
                            {"deadLetterTopic", "dlq"},
                            {"deadLetterMaxBytes", "300"}});
  auto& [channel, shared, context, sink] = t;
  const std::string large = "good: " + std::string(2000, 'x');
  EventBatch batch = parsed_batch({"<13>Nov 30 11:07:06 h good: one", "<13>Nov 30 11:07:06 h " + large,
                                   "<13>Nov 30 11:07:06 h bad: two", "<13>Nov 30 11:07:06 h postfix/smtpd[42]: three",
                                   "<13>Nov 30 11:07:06 h good: four"});
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  CHECK(eventually([&] { return channel.counters().events_held == 0; }, 20s));
  sink->stop(Clock::now() + 5s);
  const SinkCounters c = sink->counters();
  CHECK(c.events_sent == 5);
  CHECK(c.events_discarded == 0);
  CHECK(kafka_counters(*sink).dead_lettered == 3);
  CHECK(failed_for(*sink, "too_large") == 1);
  CHECK(read_topic(cluster, "good") == std::multiset<std::string>{"good: one", "good: four"});
  CHECK(read_topic(cluster, "dlq") ==
        std::multiset<std::string>{large.substr(0, 300), "bad: two", "postfix/smtpd[42]: three"});
}

TEST_CASE("deadLetterTopic that itself refuses: the dead letter is discarded and counted, never a loop",
          "[kafka][sink][faults][dead-letter]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  cluster.set_topic_error("refusing", 17 /* TOPIC_EXCEPTION: the dead-letter topic refuses everything */);
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "all"},
                            {"kafka.producer.message.max.bytes", "1000"},
                            {"kafka.producer.topic.metadata.propagation.max.ms", "500"},
                            {"deadLetterTopic", "refusing"},
                            {"deadLetterMaxBytes", "300"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch batch =
      parsed_batch({"<13>Nov 30 11:07:06 h app: " + std::string(2000, 'x'), "<13>Nov 30 11:07:06 h app: after"});
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  CHECK(eventually([&] { return channel.counters().events_held == 0; }, 20s));
  sink->stop(Clock::now() + 5s);
  const SinkCounters c = sink->counters();
  CHECK(c.events_sent == 1);
  CHECK(c.events_discarded == 1);
  CHECK(c.events_rolled_back == 0);
  CHECK(kafka_counters(*sink).dead_lettered == 0);
  CHECK(failed_for(*sink, "too_large") == 1);
  // The dead-letter topic's refusal: the broker's, or unknown once the metadata's propagation time runs out.
  CHECK(failed_for(*sink, "invalid_topic") + failed_for(*sink, "unknown_topic") == 1);
  CHECK(read_topic(cluster, "t") == std::multiset<std::string>{"app: after"});
}

TEST_CASE(
    "deadLetterTopic whose partition has no leader: a stop during the round puts the dead letter back in the "
    "channel, the event delivered beside it committed",
    "[kafka][sink][faults][dead-letter][shutdown]") {
  kafka::MockCluster cluster;
  for (const char* topic : {"t", "dlq"}) cluster.create_topic(topic, 1);
  cluster.set_partition_leader("dlq", 0, -1);  // the fault: the dead-letter round cannot be answered
  SinkUnderTest t(
      cluster,
      {{"kafka.producer.acks", "all"}, {"kafka.producer.message.max.bytes", "1000"}, {"deadLetterTopic", "dlq"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch batch =
      parsed_batch({"<13>Nov 30 11:07:06 h app: " + std::string(2000, 'x'), "<13>Nov 30 11:07:06 h app: beside"});
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  // The take's reports are in (the large one refused at once, by librdkafka itself), and its dead
  // letter waits for the dead-letter topic.
  REQUIRE(eventually([&] { return kafka_counters(*sink).dead_letters_waiting == 1; }, 10s));
  sink->stop(Clock::now() + 1s);  // SIGTERM meanwhile (what the deadline did is the verdict, below)
  CHECK(kafka_counters(*sink).dead_letters_waiting == 0);
  const SinkCounters c = sink->counters();
  CHECK(c.events_sent == 1);
  CHECK(c.events_discarded == 0);
  CHECK(kafka_counters(*sink).dead_lettered == 0);
  CHECK(channel.counters().events_held == 1);  // the dead letter, for the next run
  CHECK(read_topic(cluster, "t") == std::multiset<std::string>{"app: beside"});
}

TEST_CASE(
    "deadLetterTopic whose partition has no leader: the round is given back after 10 s and the dead letter lands "
    "once the partition has a leader again, nothing else held up meanwhile",
    "[kafka][sink][faults][dead-letter]") {
  kafka::MockCluster cluster;
  for (const char* topic : {"t", "dlq"}) cluster.create_topic(topic, 1);
  cluster.set_partition_leader("dlq", 0, -1);
  SinkUnderTest t(cluster, {{"kafka.producer.acks", "all"},
                            {"kafka.producer.message.max.bytes", "1000"},
                            {"deadLetterTopic", "dlq"},
                            {"deadLetterMaxBytes", "300"}});
  auto& [channel, shared, context, sink] = t;
  EventBatch batch =
      parsed_batch({"<13>Nov 30 11:07:06 h app: " + std::string(2000, 'x'), "<13>Nov 30 11:07:06 h app: beside"});
  const auto put_at = Clock::now();  // before the round began: the bound below cannot be short
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  REQUIRE(eventually([&] { return kafka_counters(*sink).dead_letters_waiting == 1; }, 10s));
  // Meanwhile, an event taken after the waiting one is delivered.
  EventBatch after = parsed_batch({"<13>Nov 30 11:07:06 h app: after"});
  REQUIRE(channel.put(after, Clock::now() + 5s));
  REQUIRE(eventually([&] { return read_topic(cluster, "t").size() == 2; }, 20s));
  // Given back: the round's letter purged and rolled back into the channel, the event beside committed.
  REQUIRE(eventually([&] { return sink->counters().events_rolled_back >= 1; }, 20s));
  CHECK(Clock::now() - put_at >= 10s);  // the patience the failure-modes row promises, not less
  CHECK(sink->counters().events_sent >= 1);
  cluster.set_partition_leader("dlq", 0, 1);
  REQUIRE(eventually([&] { return kafka_counters(*sink).dead_lettered == 1; }, 30s));
  REQUIRE(eventually([&] { return channel.counters().events_held == 0; }, 10s));
  sink->stop(Clock::now() + 5s);
  CHECK(sink->counters().events_discarded == 0);
  CHECK(read_topic(cluster, "t") == std::multiset<std::string>{"app: beside", "app: after"});
  CHECK(read_topic(cluster, "dlq") == std::multiset<std::string>{("app: " + std::string(2000, 'x')).substr(0, 300)});
}

TEST_CASE("good events behind one naming a topic the cluster does not have land at once", "[kafka][sink][topics]") {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 1);
  SinkUnderTest t(cluster, {{"topicHeader", "app"}, {"kafka.producer.acks", "all"}});
  auto& [channel, shared, context, sink] = t;
  wait_until_served(t);
  std::vector<std::string> lines{"<13>Nov 30 11:07:06 h nowhere: first"};
  for (int i = 0; i < 100; ++i) lines.push_back("<13>good " + std::to_string(i));  // no app: the sink's topic
  EventBatch batch = parsed_batch(lines);
  const auto put_at = Clock::now();
  REQUIRE(channel.put(batch, Clock::now() + 5s));
  REQUIRE(eventually([&] { return sink->counters().events_sent == 100; }, 10s, 10ms));
  CHECK(Clock::now() - put_at < 2s);
  CHECK(eventually([&] { return sink->counters().events_discarded == 1; }, 10s));
  sink->stop(Clock::now() + 10s);
  CHECK(failed_for(*sink, "unknown_topic") == 1);
  CHECK_FALSE(cluster_topics(cluster).count("nowhere"));
}

namespace {

// Keyed events for partitions 0 and 1 of a two-partition topic (murmur2 of the host: "21" → 0,
// "abc" → 1, as Kafka's own vectors give them for ten partitions, whose parity they keep), 2,000 a
// second for 3 s, into a sink with acks=all and one take in flight; partition 0 without a leader
// if `fault`. Returns partition 1's events delivered when the load ends, and checks that every
// event lands once after partition 0 has a leader again.
uint64_t partition_one_delivered(bool fault) {
  kafka::MockCluster cluster;
  cluster.create_topic("t", 2);
  if (fault) cluster.set_partition_leader("t", 0, -1);
  SinkUnderTest t(cluster, {{"keyField", "host"},
                            {"kafka.producer.acks", "all"},
                            {"maxTakesInFlight", "1"},
                            {"batchSize", "200"},
                            {"kafka.producer.linger.ms", "5"},
                            {"stalledPartitionTimeout", "2s"}});
  auto& [channel, shared, context, sink] = t;
  REQUIRE(eventually([&] { return kafka_counters(*sink).destination_served; }, 10s));
  const auto start = Clock::now();
  int put = 0;
  for (int i = 0; i < 6000; ++i) {
    EventBatch batch =
        parsed_batch({"<13>Nov 30 11:07:06 " + std::string(i % 2 ? "abc" : "21") + " app: event " + std::to_string(i)});
    REQUIRE(channel.put(batch, Clock::now() + 5s));
    ++put;
    // The load's pace (2,000 a second), not a synchronisation.
    std::this_thread::sleep_until(start + std::chrono::microseconds(500) * (i + 1));
  }
  std::this_thread::sleep_until(Clock::now() + 200ms);
  // With the fault nothing of partition 0 can have been delivered (nor read: it has no leader).
  uint64_t partition_one = sink->counters().events_sent;
  if (!fault) {
    partition_one = 0;
    kafka::TopicReader(cluster.bootstrap_servers(), "t")
        .read_all([&](int32_t partition, int64_t, int64_t, std::string_view) { partition_one += partition == 1; },
                  kafka::ReadOptions{500ms, 30s});
  }
  CHECK(kafka_counters(*sink).producer_restarts == 0);  // no leader is no stall
  if (fault) cluster.set_partition_leader("t", 0, 1);
  CHECK(eventually([&] { return sink->counters().events_sent == static_cast<uint64_t>(put); }, 30s));
  sink->stop(Clock::now() + 10s);
  check_landed_once(cluster, "t", static_cast<size_t>(put));
  return partition_one;
}

}  // namespace

TEST_CASE(
    "a partition without a leader holds up only its own keyed events: the other partition keeps its rate, and "
    "every event lands once it has a leader",
    "[kafka][sink][faults]") {
  const uint64_t healthy = partition_one_delivered(false);
  const uint64_t with_fault = partition_one_delivered(true);
  INFO("partition 1 delivered during the load: " << healthy << " without the fault, " << with_fault << " with it");
  CHECK(healthy > 2500);
  CHECK(with_fault >= healthy * 9 / 10);
}

TEST_CASE("the memory bound counts maxTopics topic handles only when events can name topics", "[kafka][sink][memory]") {
  kafka::MockCluster cluster;
  memory::Context context{.max_event_bytes = 2048,
                          .max_batch_bytes = 2048 * 100,
                          .takes_in_flight = 1,
                          .channel_capacity = 10000,
                          .event_headers = std::vector<std::string>{}};
  const auto bound = [&](std::map<std::string, std::string> properties) {
    const SinkUnderTest t(cluster, std::move(properties));
    const uint64_t b = t.sink->memory_bound(context);
    t.sink->stop(Clock::now() + 5s);
    return b;
  };
  constexpr uint64_t kHandle = 32 << 10;
  // No source sets a header: the default topicHeader (topic) names nothing.
  const uint64_t own_topic = bound({{"maxTopics", "1000"}});
  CHECK(bound({{"allowTopicOverride", "false"}}) == own_topic);
  // A parsed field names topics whatever the sources do.
  CHECK(bound({{"topicHeader", "app"}, {"maxTopics", "100"}}) == own_topic + 100 * kHandle);
  CHECK(bound({{"topicHeader", "app"}}) == own_topic + 1000 * kHandle);
  CHECK(bound({{"topic", "logs-%{app}"}}) == own_topic + 1000 * kHandle);
  // A header: only when some source's interceptor may set it, or may set any name.
  CHECK(bound({{"topic", "logs-%{dc}"}}) == own_topic);
  context.event_headers = std::vector<std::string>{"dc"};
  CHECK(bound({{"topic", "logs-%{dc}"}}) == own_topic + 1000 * kHandle);
  CHECK(bound({}) == own_topic);
  context.event_headers = std::nullopt;
  CHECK(bound({}) == own_topic + 1000 * kHandle);
}

TEST_CASE("the memory bound counts the encoded buffers a take keeps until librdkafka's reports",
          "[kafka][sink][memory]") {
  kafka::MockCluster cluster;
  const memory::Context context{.max_event_bytes = 2048,
                                .max_batch_bytes = 2048 * 100,
                                .takes_in_flight = 1,
                                .channel_capacity = 10000,
                                .event_headers = std::vector<std::string>{}};
  const auto bound = [&](std::map<std::string, std::string> properties) {
    properties["batchSize"] = "100";
    properties["kafka.producer.queue.buffering.max.kbytes"] = "4096";
    const SinkUnderTest t(cluster, std::move(properties));
    const uint64_t b = t.sink->memory_bound(context);
    t.sink->stop(Clock::now() + 5s);
    return b;
  };
  const uint64_t raw = bound({{"kafka.producer.acks", "0"}});
  // acks = 0: the handed-over takes' buffers hold what librdkafka's queue holds (4 MiB here), and
  // may have grown to twice that; besides the take being built (100 events of Flume's event).
  const uint64_t flume = bound({{"kafka.producer.acks", "0"}, {"useFlumeEventFormat", "true"}});
  CHECK(flume >= raw + 2 * (4096ull << 10) + 100 * 2 * 2048);
  // acks >= 1: the takes in flight keep theirs; librdkafka's queue holds no more than they do.
  const uint64_t awaited_raw = bound({{"kafka.producer.acks", "1"}});
  const uint64_t awaited_flume = bound({{"kafka.producer.acks", "1"}, {"useFlumeEventFormat", "true"}});
  CHECK(awaited_flume >= awaited_raw + 2 * 2 * 100 * 2 * 2048);  // two takes, each up to twice its bytes
  CHECK(awaited_flume < flume);
}
