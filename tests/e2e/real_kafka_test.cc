// The agent against a real Apache Kafka 4.4 broker (one KRaft node, with a SASL_SSL listener
// beside the plain one, creating the topics clients ask for as Kafka does by default), started
// once for this file by tests/kafka/cluster.sh. Each case has topics of its own. Readers: the
// verifier, kcat, and Kafka's own console consumer and producer.

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <librdkafka/rdkafka.h>

#include "loadgen/verifier.h"
#include "sinks/kafka/topic_reader.h"
#include "tests/support/eventually.h"
#include "tests/support/kafka_cluster.h"
#include "tests/support/pipeline.h"
#include "tests/support/test_thread.h"
#include "tests/support/token_server.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

KafkaCluster& kafka() { return KafkaCluster::shared({.nodes = 1, .sasl = true, .auto_create = true}); }

// Lines the load generator replays (it appends " /lg/CCCCC/SSSSSSSSSS" to each), with the body
// Flume's rules give them: what the sinks send by default.
const std::vector<std::pair<std::string, std::string>> kLines{
    {"<134>Nov 30 11:07:06 web01 httpd: GET /index.html HTTP/1.1 200 512", "httpd: GET /index.html HTTP/1.1 200 512"},
    {"<165>1 2026-11-30T11:07:06.123Z mymachine.example.com evntslog 42 ID47 [exampleSDID@32473 iut=\"3\"] an "
     "RFC 5424 event",
     "evntslog 42 ID47 [exampleSDID@32473 iut=\"3\"] an RFC 5424 event"},
    {"<14>Nov 30 11:07:06 h app: na\xc3\xafve caf\xc3\xa9 \xe2\x9c\x93", "app: na\xc3\xafve caf\xc3\xa9 \xe2\x9c\x93"},
    {"no priority at all, kept whole", "no priority at all, kept whole"},
};

std::string replay_file(const Pipeline& p) {
  const std::string path = p.dir().file("replay.txt");
  std::ofstream out(path);
  for (const auto& [line, body] : kLines) out << line << "\n";
  return path;
}

std::string expected_payload(uint32_t connection, uint64_t sequence) {
  char id[40];
  std::snprintf(id, sizeof id, " /lg/%05u/%010llu", connection, static_cast<unsigned long long>(sequence));
  return kLines[sequence % kLines.size()].second + id;
}

struct Landed {
  std::map<int32_t, uint64_t> per_partition;
  std::multiset<std::string> payloads;
};

Landed read_topic(const std::string& bootstrap, const std::string& topic) {
  Landed landed;
  sluice::kafka::TopicReader(bootstrap, topic)
      .read_all(
          [&](int32_t partition, int64_t, int64_t, std::string_view payload) {
            ++landed.per_partition[partition];
            landed.payloads.emplace(payload);
          },
          sluice::kafka::ReadOptions{1500ms, 60s});
  return landed;
}

// The host name a payload ends with, before the load generator's " /lg/..." id.
std::string host_of(std::string_view payload) {
  payload = payload.substr(0, payload.find(" /lg/"));
  return std::string(payload.substr(payload.rfind(' ') + 1));
}

// One source on two ports, a channel, one sink to `topic` with `sink_lines` (t.sinks.k1.*).
std::string one_sink_config(const std::string& bootstrap, const std::string& topic, const std::string& channel_lines,
                            const std::vector<std::string>& sink_lines) {
  std::string config =
      "t.sources = r1\nt.channels = c1\nt.sinks = k1\nt.sources.r1.type = syslogtcp\nt.sources.r1.host = 127.0.0.1\n"
      "t.sources.r1.ports = 0 0\nt.sources.r1.channels = c1\n" +
      channel_lines + "t.sinks.k1.type = kafka\nt.sinks.k1.channel = c1\nt.sinks.k1.brokerList = " + bootstrap +
      "\nt.sinks.k1.topic = " + topic + "\n";
  for (const std::string& line : sink_lines) config += "t.sinks.k1." + line + "\n";
  return config;
}

const std::string kMemoryChannel =
    "t.channels.c1.type = memory\nt.channels.c1.capacity = 60000\n"
    "t.channels.c1.transactionCapacity = 8000\n";

std::string testing_join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += "\n  [" + line + "]";
  return out;
}

}  // namespace

TEST_CASE(
    "the seed's configuration into Apache Kafka 4.4: every event once, each sink in its partition, byte for byte, "
    "in snappy batches",
    "[kafka-real]") {
  KafkaCluster& k = kafka();
  k.create_topic("seed", 10);
  Pipeline p;
  p.use_kafka(k.bootstrap(), "seed");
  p.start_agent(ten_sink_config(k.bootstrap(), {"acks = 0", "compression.codec = snappy", "linger.ms = 5"}, "seed"),
                "t", {"--metrics", "127.0.0.1:0"});
  p.wait_until_served();  // so that each of the ten sinks takes a share of two seconds' load
  REQUIRE(p.send({"-c", "4", "-n", "100000", "-r", "50000", "--replay", replay_file(p)}) == 0);
  std::string report;
  const int verified = p.verify(report);
  INFO(report);
  CHECK(verified == 0);
  CHECK_THAT(report, Catch::Contains("unique 100000, duplicates 0, missing 0"));
  // Each sink is pinned to its partition: what sink kN sent is what partition N holds.
  const std::string metrics = http_get(p.metrics_port(), "/metrics");
  const Landed landed = read_topic(k.bootstrap(), "seed");
  REQUIRE(landed.per_partition.size() == 10);
  for (int n = 0; n < 10; ++n) {
    INFO("partition " << n);
    CHECK(landed.per_partition.at(n) ==
          prometheus_sum(metrics, "sluice_sink_events_sent_total{sink=\"k" + std::to_string(n) + "\"}"));
  }
  // Byte for byte: each payload is the body of the line sent, its id included.
  // As the broker stored them (Kafka's kafka-dump-log): the batches snappy-compressed, and their
  // counts the events sent. (librdkafka before 2.11.1 stops compressing against a broker that no
  // longer offers the oldest Produce versions; Kafka 4.4 offers them.) librdkafka sends a batch
  // uncompressed when compressing does not make it smaller: a batch of an event or two.
  {
    const std::string dump = k.dump_log("seed");
    std::istringstream lines(dump);
    uint64_t batches = 0, events = 0, snappy_events = 0;
    std::vector<std::string> plain_batches_of_more_than_two;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("baseOffset:", 0) != 0) continue;
      ++batches;
      const size_t at = line.find(" count: ");
      const uint64_t count = at == std::string::npos ? 0 : std::stoull(line.substr(at + 8));
      events += count;
      if (line.find(" compresscodec: snappy ") != std::string::npos)
        snappy_events += count;
      else if (count > 2)
        plain_batches_of_more_than_two.push_back(line);
    }
    INFO(dump.substr(0, 2000) << testing_join(plain_batches_of_more_than_two));
    CHECK(batches > 100);
    CHECK(events == 100000);
    CHECK(snappy_events >= 99900);
    CHECK(plain_batches_of_more_than_two.empty());
  }
  std::multiset<std::string> expected;
  for (const auto& [connection, sent] : sluice::loadgen::read_sender_summary(p.dir().file("sent.json")).connections)
    for (uint64_t s = 0; s < sent.sent; ++s) expected.insert(expected_payload(connection, s));
  REQUIRE(expected.size() == 100000);
  std::vector<std::string> differing;  // the first few, to show
  uint64_t exact = 0;
  for (const std::string& payload : landed.payloads) {
    if (expected.count(payload))
      ++exact;
    else if (differing.size() < 5)
      differing.push_back(payload);
  }
  INFO("first payloads that differ: " << testing_join(differing));
  CHECK(exact == 100000);
  CHECK((landed.payloads == expected));
  // A consumer we did not write agrees: Kafka's own, and kcat.
  const std::string console = k.console_consume("seed", 100000, 60s);
  std::multiset<std::string> console_payloads;
  std::istringstream lines(console);
  for (std::string line; std::getline(lines, line);) console_payloads.insert(line);
  CHECK((console_payloads == expected));
  const std::string kcat_out = p.dir().file("kcat.out");
  CHECK(run({"/usr/bin/kcat", "-b", k.bootstrap(), "-C", "-t", "seed", "-e", "-q", "-f", "%s\n"}, kcat_out, 60s) == 0);
  std::ifstream kcat_lines(kcat_out);
  size_t kcat_count = 0;
  for (std::string line; std::getline(kcat_lines, line);) kcat_count += expected.count(line) > 0;
  CHECK(kcat_count == 100000);
  CHECK(p.stop_agent(30s) == std::optional<int>(0));
}

TEST_CASE("keyField = host puts each event in the partition Kafka's own Java producer picks for that key",
          "[kafka-real]") {
  KafkaCluster& k = kafka();
  k.create_topic("java-keys", 10);
  k.create_topic("sluice-keys", 10);
  std::vector<std::string> hosts;
  for (int i = 0; i < 40; ++i) hosts.push_back("host-" + std::to_string(i * 7919) + ".example.com");
  Pipeline p;
  {
    std::ofstream keyed(p.dir().file("keyed.txt"));
    for (const std::string& host : hosts) keyed << host << "\tfrom java " << host << "\n";
    std::ofstream lines(p.dir().file("hosts.txt"));
    for (const std::string& host : hosts)
      lines << "<13>Nov 30 11:07:06 " << host << " app: from sluice " << host << "\n";
  }
  // Kafka's console producer: keys parsed from "key<TAB>value", partitioned by its own partitioner.
  k.console_produce("java-keys", p.dir().file("keyed.txt"));
  std::map<std::string, int32_t> java, ours;
  sluice::kafka::TopicReader(k.bootstrap(), "java-keys")
      .read_all(
          [&](int32_t partition, int64_t, int64_t, std::string_view payload) { java[host_of(payload)] = partition; },
          sluice::kafka::ReadOptions{1500ms, 60s});
  REQUIRE(java.size() == hosts.size());

  p.start_agent(
      one_sink_config(k.bootstrap(), "sluice-keys", kMemoryChannel, {"keyField = host", "kafka.producer.acks = all"}));
  REQUIRE(p.send({"-c", "1", "-n", std::to_string(hosts.size()), "--replay", p.dir().file("hosts.txt")}) == 0);
  CHECK(p.stop_agent(30s) == std::optional<int>(0));
  sluice::kafka::TopicReader(k.bootstrap(), "sluice-keys")
      .read_all(
          [&](int32_t partition, int64_t, int64_t, std::string_view payload) { ours[host_of(payload)] = partition; },
          sluice::kafka::ReadOptions{1500ms, 60s});
  CHECK(ours == java);
  std::set<int32_t> used;
  for (const auto& [host, partition] : ours) used.insert(partition);
  CHECK(used.size() > 5);  // forty keys spread: not one partition by accident
}

TEST_CASE("acks=1 and acks=all with idempotence into Apache Kafka 4.4: every event exactly once", "[kafka-real]") {
  KafkaCluster& k = kafka();
  for (const char* acks : {"1", "all"}) {
    const std::string topic = std::string("acks-") + acks;
    INFO(topic);
    k.create_topic(topic, 10);
    Pipeline p;
    p.use_kafka(k.bootstrap(), topic);
    std::vector<std::string> producer{std::string("acks = ") + acks, "linger.ms = 5", "compression.codec = snappy"};
    if (std::string(acks) == "all") producer.push_back("enable.idempotence = true");
    p.start_agent(ten_sink_config(k.bootstrap(), producer, topic));
    REQUIRE(p.send({"-c", "4", "-n", "100000", "-r", "50000"}) == 0);
    std::string report;
    CHECK(p.verify(report) == 0);
    INFO(report);
    CHECK_THAT(report, Catch::Contains("unique 100000, duplicates 0, missing 0"));
    CHECK(p.stop_agent(30s) == std::optional<int>(0));
  }
}

TEST_CASE("the broker stopped for 30 s under load with spillablememory: everything is delivered once it is back",
          "[kafka-real]") {
  KafkaCluster& k = kafka();
  k.create_topic("outage", 10);
  Pipeline p;
  p.use_kafka(k.bootstrap(), "outage");
  p.start_agent(with_channel(ten_sink_config(k.bootstrap(), kAcksAll, "outage"),
                             "t.channels.c1.type = spillablememory\nt.channels.c1.memoryCapacity = 20000\n"
                             "t.channels.c1.transactionCapacity = 8000\nt.channels.c1.dataDir = " +
                                 p.dir().file("spill") + "\n"),
                "t", {"--metrics", "127.0.0.1:0"});
  double spilled_at_restart = 0;
  TestThread outage([&] {
    std::this_thread::sleep_for(3s);  // the schedule of the fault, not a synchronisation
    k.stop_node(1);
    std::this_thread::sleep_for(30s);
    // Back once the channel has also spilled five times its memory (waited for 30 s more at most).
    eventually([&] { return p.metric("sluice_channel_events_spilled_total") >= 100000; }, 30s, 200ms);
    spilled_at_restart = p.metric("sluice_channel_events_spilled_total");
    k.restart_node(1);
  });
  const int sent = p.send({"-c", "4", "-r", "10000", "-d", "40s"});
  outage.join();
  CHECK(sent == 0);
  CHECK(spilled_at_restart >= 100000);
  CHECK(eventually([&] { return p.metric("sluice_channel_events") == 0; }, 60s, 200ms));
  std::string report;
  p.verify(report);  // the verdict: nothing missing, a duplicate only where the sink counted one
  INFO(report << p.agent_log());
  std::fprintf(stderr, "outage: spilled %.0f, possibly duplicated %.0f, new producers %.0f; %s",
               p.metric("sluice_channel_events_spilled_total"),
               p.metric("sluice_sink_events_possibly_duplicated_total"),
               p.metric("sluice_sink_producer_restarts_total"), report.c_str());
  CHECK(missing_in(report) == 0);
  CHECK(duplicates_in(report) <= p.metric("sluice_sink_events_possibly_duplicated_total"));
  CHECK(p.stop_agent(30s) == std::optional<int>(0));
}

TEST_CASE(
    "a topic missing that the sink may not create: a clear line every 10 s, nothing taken, and delivery starts by "
    "itself once it is created",
    "[kafka-real]") {
  KafkaCluster& k = kafka();
  Pipeline p;
  p.use_kafka(k.bootstrap(), "late");
  // The broker would create it; the producer does not ask it to.
  p.start_agent(one_sink_config(k.bootstrap(), "late", kMemoryChannel,
                                {"kafka.producer.acks = all", "kafka.producer.enable.idempotence = true",
                                 "kafka.producer.allow.auto.create.topics = false"}),
                "t", {"--metrics", "127.0.0.1:0"});
  REQUIRE(p.send({"-c", "2", "-n", "10000", "-r", "5000"}) == 0);
  const auto waiting_lines = [&] {
    const std::string log = p.agent_log();
    size_t lines = 0;
    for (size_t at = log.find("waiting to send to late: topic late does not exist"); at != std::string::npos;
         at = log.find("waiting to send to late: topic late does not exist", at + 1))
      ++lines;
    return lines;
  };
  // Logged, rate-limited, naming the topic; and nothing was taken or dropped: all still in the channel.
  REQUIRE(eventually([&] { return waiting_lines() >= 1; }, 30s, 200ms));
  CHECK(p.metric("sluice_sink_destination_served") == 0);
  CHECK(p.metric("sluice_sink_events_taken_total") == 0);
  CHECK(p.metric("sluice_sink_events_discarded_total") == 0);
  CHECK(p.metric("sluice_channel_events") == 10000);
  k.create_topic("late", 3);
  CHECK(eventually([&] { return p.metric("sluice_channel_events") == 0; }, 60s, 200ms));
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report << p.agent_log());
  CHECK_THAT(report, Catch::Contains("unique 10000, duplicates 0, missing 0"));
  CHECK(waiting_lines() <= 6);  // one per 10 s at most
  CHECK(p.stop_agent(30s) == std::optional<int>(0));
}

TEST_CASE(
    "a topic that does not exist yet, created by Kafka as the seed's sinks first ask for it, with acks=0: every "
    "event stored, three topics in a row",
    "[kafka-real]") {
  // The seed's shape: ten sinks pinned to partitions 0-9, acks=0, snappy, 500 per batch. Before
  // its first events met a partition its leader did not serve yet, the broker closed the connection
  // and whole batches were gone (0.5-1.4% of the first 10 s). The sinks now wait until it is served.
  KafkaCluster& k = kafka();
  const std::vector<std::string> seed{"acks = 0", "compression.codec = snappy", "batch.num.messages = 500",
                                      "linger.ms = 50", "socket.send.buffer.bytes = 16777216"};
  for (const char* topic : {"fresh-a", "fresh-b", "fresh-c"}) {
    INFO(topic);
    Pipeline p;
    p.use_kafka(k.bootstrap(), topic);
    p.start_agent(ten_sink_config(k.bootstrap(), seed, topic), "t", {"--metrics", "127.0.0.1:0"});
    REQUIRE(p.send({"-c", "4", "-r", "20000", "-d", "5s"}) == 0);
    CHECK(eventually([&] { return p.metric("sluice_channel_events") == 0; }, 60s, 200ms));
    std::string report;
    p.verify(report);
    INFO(report << p.agent_log());
    CHECK(missing_in(report) == 0);
    CHECK(duplicates_in(report) == 0);
    CHECK(p.stop_agent(30s) == std::optional<int>(0));
    CHECK(shutdown_account(p.agent_log()).possibly_lost == 0);  // no connection went down
  }
}

TEST_CASE(
    "SASL_SSL to Apache Kafka 4.4: PLAIN, SCRAM-SHA-512 and SCRAM-SHA-256 deliver, a wrong password is a clear error "
    "within seconds",
    "[kafka-real]") {
  KafkaCluster& k = kafka();
  k.create_topic("secure", 3);
  const auto secure = [&](const std::string& mechanism, const std::string& password) {
    return std::vector<std::string>{"kafka.producer.acks = all",
                                    "kafka.producer.security.protocol = SASL_SSL",
                                    "kafka.producer.sasl.mechanism = " + mechanism,
                                    "kafka.producer.sasl.username = sluice",
                                    "kafka.producer.sasl.password = " + password,
                                    "kafka.producer.ssl.ca.location = " + k.ca_file()};
  };
  {
    Pipeline p;
    p.use_kafka(k.bootstrap(), "secure");  // read back over the plain listener
    p.start_agent(one_sink_config(k.sasl_bootstrap(), "secure", kMemoryChannel, secure("PLAIN", "sluice-secret")));
    REQUIRE(p.send({"-c", "2", "-n", "20000", "-r", "10000"}) == 0);
    std::string report;
    CHECK(p.verify(report) == 0);
    INFO(report);
    CHECK_THAT(report, Catch::Contains("unique 20000, duplicates 0, missing 0"));
    CHECK(p.stop_agent(30s) == std::optional<int>(0));
  }
  // The listener's SCRAM-SHA-512 credentials are right: Kafka's own Java client is let in.
  {
    TempDir dir;
    std::ofstream(dir.file("scram.txt")) << "k1\tscram one\nk2\tscram two\n";
    k.create_topic("scram-java", 1);
    k.console_produce("scram-java", dir.file("scram.txt"), "SCRAM-SHA-512");
    CHECK(k.console_consume("scram-java", 2, 20s) == "scram one\nscram two\n");
  }
  // librdkafka before 2.6.1 (Debian 12's 2.0.2, linked with -DSLUICE_SYSTEM_RDKAFKA=ON) gets
  // SCRAM wrong against Kafka 4 (its nonce bug, fixed in 2.6.1: confluentinc/librdkafka pull
  // request #4895): there SCRAM must fail loudly, as a wrong password does. The librdkafka
  // Sluice links (.ci/librdkafka.pin) must deliver.
  const bool scram_works = rd_kafka_version() >= 0x020601ff;
#ifdef SLUICE_RDKAFKA_PINNED
  REQUIRE(scram_works);  // the librdkafka .ci/librdkafka.pin names must be one that delivers
#endif
  std::vector<std::pair<std::string, std::string>> refused{
      {"PLAIN", "wrong"}, {"SCRAM-SHA-512", "wrong"}, {"SCRAM-SHA-256", "wrong"}};
  for (const std::string mechanism : {"SCRAM-SHA-512", "SCRAM-SHA-256"}) {
    if (!scram_works) {
      refused.emplace_back(mechanism, "sluice-secret");
      continue;
    }
    INFO(mechanism << " with librdkafka " << rd_kafka_version_str());
    const std::string topic = "secure-" + mechanism;
    k.create_topic(topic, 3);
    Pipeline p;
    p.use_kafka(k.bootstrap(), topic);
    p.start_agent(one_sink_config(k.sasl_bootstrap(), topic, kMemoryChannel, secure(mechanism, "sluice-secret")));
    REQUIRE(p.send({"-c", "1", "-n", "1000", "-r", "10000"}) == 0);
    std::string report;
    CHECK(p.verify(report) == 0);
    INFO(report);
    CHECK_THAT(report, Catch::Contains("unique 1000, duplicates 0, missing 0"));
    CHECK(p.stop_agent(30s) == std::optional<int>(0));
  }
  for (const auto& [mechanism, password] : refused) {
    INFO(mechanism << " / " << password << " with librdkafka " << rd_kafka_version_str());
    Pipeline p;
    p.start_agent(one_sink_config(k.sasl_bootstrap(), "secure", kMemoryChannel, secure(mechanism, password)), "t",
                  {"--metrics", "127.0.0.1:0"});
    const auto started = std::chrono::steady_clock::now();
    CHECK(eventually(
        [&] {
          return p.agent_log().find("Authentication failed") != std::string::npos ||
                 p.agent_log().find("_AUTHENTICATION") != std::string::npos;
        },
        20s, 100ms));
    CHECK(std::chrono::steady_clock::now() - started < 15s);
    // Kafka's answer names the mechanism: the SCRAM exchange itself failed, not the connection.
    if (mechanism != "PLAIN") CHECK(p.agent_log().find("SASL mechanism " + mechanism) != std::string::npos);
    // Counted from librdkafka's error callback, which comes after the log line above, not with it.
    CHECK(eventually([&] { return p.metric("sluice_kafka_client_errors_total") > 0; }, 10s, 100ms));
    CHECK(p.stop_agent(30s) == std::optional<int>(0));
  }
}

TEST_CASE(
    "deadLetterTopic into Apache Kafka 4.4: an event over the topic's max.message.bytes and events naming a refused "
    "and a missing topic land there with their reasons, the events around them in their topic",
    "[kafka-real][dead-letter]") {
  KafkaCluster& k = kafka();
  k.create_topic("dl-main", 1, {"max.message.bytes=2000"});
  k.create_topic("dl-letters", 1);
  Pipeline p;
  p.use_kafka(k.bootstrap(), "dl-main");
  p.start_agent(
      one_sink_config(k.bootstrap(), "dl-main", kMemoryChannel,
                      {"kafka.producer.acks = all", "kafka.producer.enable.idempotence = true", "topicHeader = app",
                       "deadLetterTopic = dl-letters", "deadLetterMaxBytes = 1000", "kafka.headers = host"}) +
          "t.sources.r1.eventSize = 10000\n",
      "t", {"--metrics", "127.0.0.1:0"});
  const std::string large(5000, 'x');
  const std::string lines = "<13>Nov 30 11:07:06 h1 dl-main: one\n<13>Nov 30 11:07:06 h2 dl-main: " + large +
                            "\n<13>Nov 30 11:07:06 h3 postfix/smtpd[42]: not a topic name\n"
                            "<13>Nov 30 11:07:06 h4 dl-nosuch: a topic that does not exist\n"
                            "<13>Nov 30 11:07:06 h5 dl-main: two\n";
  const int fd = connect_loopback(p.agent_ports().at(0));
  REQUIRE(::write(fd, lines.data(), lines.size()) == static_cast<ssize_t>(lines.size()));
  ::close(fd);
  const bool settled = eventually([&] { return p.metric("sluice_sink_events_sent_total") == 5; }, 60s, 200ms);
  INFO(p.agent_log());
  CHECK(settled);
  CHECK(p.metric("sluice_channel_events") == 0);
  CHECK(p.metric("sluice_sink_events_dead_lettered_total") == 3);
  CHECK(p.metric("sluice_sink_events_discarded_total") == 0);

  // kcat reads each dead letter's headers and payload back: why, where it was meant to go, how long it was.
  const auto consume = [&](const std::string& topic) {
    const std::string out = p.dir().file(topic + ".out");
    std::remove(out.c_str());
    CHECK(run({"/usr/bin/kcat", "-b", k.bootstrap(), "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%h|%s\n"},
              out, 60s) == 0);
    std::multiset<std::string> records;
    std::istringstream in(read_file(out));
    for (std::string line; std::getline(in, line);) records.insert(line);
    return records;
  };
  CHECK(consume("dl-main") == std::multiset<std::string>{"host=h1|dl-main: one", "host=h5|dl-main: two"});
  CHECK(consume("dl-letters") ==
        std::multiset<std::string>{
            "host=h2,sluice.dead_letter.reason=too_large,sluice.dead_letter.topic=dl-main,"
            "sluice.dead_letter.truncated=5009|" +
                ("dl-main: " + large).substr(0, 1000),
            "host=h3,sluice.dead_letter.reason=invalid_topic,sluice.dead_letter.topic=postfix/smtpd|"
            "postfix/smtpd[42]: not a topic name",
            "host=h4,sluice.dead_letter.reason=unknown_topic,sluice.dead_letter.topic=dl-nosuch|"
            "dl-nosuch: a topic that does not exist"});
  CHECK(p.stop_agent(30s) == std::optional<int>(0));
}

TEST_CASE(
    "sslReloadInterval: the client certificate for an SSL listener that requires one, rotated on disk under load: a "
    "new producer takes it, files that do not load keep the running one, every event once",
    "[kafka-real][tls-rotation]") {
  KafkaCluster& k = kafka();
  k.create_topic("mtls", 3);
  Pipeline p;
  p.use_kafka(k.ssl_bootstrap(), "mtls");
  const std::string live_cert = p.dir().file("client.pem"), live_key = p.dir().file("client.key");
  const auto install = [&](const std::string& client) {
    std::ofstream(live_key, std::ios::trunc) << read_file(k.client_file(client + ".key"));
    std::ofstream(live_cert, std::ios::trunc) << read_file(k.client_file(client + ".pem"));
  };
  install("client-a");
  p.start_agent(
      one_sink_config(k.ssl_bootstrap(), "mtls", kMemoryChannel,
                      {"kafka.producer.acks = all", "kafka.producer.enable.idempotence = true",
                       "kafka.producer.security.protocol = SSL", "kafka.producer.ssl.ca.location = " + k.ca_file(),
                       "kafka.producer.ssl.certificate.location = " + live_cert,
                       "kafka.producer.ssl.key.location = " + live_key, "sslReloadInterval = 200ms"}),
      "t", {"--metrics", "127.0.0.1:0"});
  int sent = -1;
  TestThread sender([&] { sent = p.send({"-c", "2", "-n", "40000", "-r", "5000", "-d", "30s"}); });
  const auto reloads = [&](const std::string& result) {
    return p.metric("sluice_sink_tls_reloads_total{sink=\"k1\",result=\"" + result + "\"}");
  };
  const bool flowing = eventually([&] { return p.metric("sluice_sink_events_sent_total") >= 5000; }, 30s, 100ms);
  install("client-b");  // the renewed certificate (a moment of a mismatched pair may be refused first)
  const bool renewed = eventually([&] { return reloads("applied") >= 1; }, 20s, 100ms);
  const double refused_before = reloads("refused");
  std::ofstream(live_key, std::ios::trunc) << "not a key\n";  // a broken renewal
  const bool refused = eventually([&] { return reloads("refused") >= refused_before + 1; }, 20s, 100ms);
  sender.join();
  INFO(p.agent_log());
  CHECK(flowing);
  CHECK(renewed);
  CHECK(refused);
  REQUIRE(sent == 0);
  CHECK(eventually([&] { return p.metric("sluice_channel_events") == 0; }, 60s, 200ms));
  std::string report;
  CHECK(p.verify(report, k.bootstrap()) == 0);
  CHECK_THAT(report, Catch::Contains("unique 40000, duplicates 0, missing 0"));
  CHECK(p.stop_agent(30s) == std::optional<int>(0));
}

TEST_CASE(
    "OAUTHBEARER with OIDC client credentials, in Flume's JAAS form, into Kafka 4.4 validating JWTs: delivered "
    "across token refreshes with nothing lost, a wrong secret delivers nothing and says why",
    "[kafka-real][oauth]") {
  KafkaCluster& k = kafka();
  k.create_topic("oauth", 3);
  // Tokens live 6 s: librdkafka fetches a new one before each expires, and the broker has every
  // session authenticate again every 5 s (connections.max.reauth.ms), with the token it has then.
  TokenServer tokens(k.client_file("oauth.key"), "sluice", "sluice-secret", 6s);
  const auto config = [&](const std::string& secret) {
    return one_sink_config(
        k.sasl_bootstrap(), "oauth", kMemoryChannel,
        {"kafka.producer.acks = all", "kafka.producer.enable.idempotence = true",
         "kafka.producer.security.protocol = SASL_SSL", "kafka.producer.ssl.ca.location = " + k.ca_file(),
         "kafka.producer.sasl.mechanism = OAUTHBEARER",
         "kafka.producer.sasl.login.callback.handler.class = "
         "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
         "kafka.producer.sasl.oauthbearer.token.endpoint.url = " + tokens.url(),
         "kafka.producer.sasl.jaas.config = org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
         "required clientId=\"sluice\" clientSecret=\"" +
             secret + "\" scope=\"kafka\";"});
  };
  {
    Pipeline p;
    p.use_kafka(k.sasl_bootstrap(), "oauth");
    p.start_agent(config("sluice-secret"), "t", {"--metrics", "127.0.0.1:0"});
    REQUIRE(p.send({"-c", "2", "-n", "75000", "-r", "5000", "-d", "30s"}) == 0);  // 15 s: two refreshes at least
    CHECK(eventually([&] { return p.metric("sluice_channel_events") == 0; }, 60s, 200ms));
    std::string report;
    CHECK(p.verify(report, k.bootstrap()) == 0);
    INFO(report << p.agent_log());
    CHECK_THAT(report, Catch::Contains("unique 75000, duplicates 0, missing 0"));
    CHECK(tokens.issued() >= 3);
    CHECK(tokens.refused() == 0);
    CHECK(p.stop_agent(30s) == std::optional<int>(0));
  }
  {
    Pipeline p;
    p.use_kafka(k.sasl_bootstrap(), "oauth");
    p.start_agent(config("not-the-secret"), "t", {"--metrics", "127.0.0.1:0"});
    REQUIRE(p.send({"-c", "1", "-n", "1000", "-d", "10s"}) == 0);
    // Said at once, by the token endpoint's refusal; nothing leaves the channel.
    CHECK(eventually([&] { return tokens.refused() >= 1; }, 30s, 100ms));
    CHECK(eventually(
        [&] {
          const std::string log = p.agent_log();
          return log.find("OAUTHBEARER") != std::string::npos && log.find("401") != std::string::npos;
        },
        30s, 200ms));
    CHECK(p.metric("sluice_sink_events_sent_total") == 0);
    CHECK(p.metric("sluice_channel_events") == 1000);
    INFO(p.agent_log());
    p.stop_agent(10s);
  }
}
