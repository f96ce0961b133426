// End to end: real processes (the Kafka mock broker, the agent, the load generator, the
// verifier) on loopback, as a user runs them.

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <atomic>
#include <fstream>
#include <regex>
#include <thread>

#include "sinks/kafka/topic_reader.h"
#include "tests/support/pipeline.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

int partitions_with_events(const std::string& report) {
  std::smatch line;
  if (!std::regex_search(report, line, std::regex("partitions:([^\n]*)"))) return 0;
  int n = 0;
  const std::string text = line[1];
  static const std::regex entry(R"( (\d+)=(\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it)
    if (std::stoull((*it)[2]) > 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("200000 events over 8 connections on two ports land once each in all 10 partitions and SIGTERM exits 0",
          "[e2e]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), {"acks = 0", "compression.codec = snappy", "linger.ms = 20"}), "t",
                {"--metrics", "127.0.0.1:0"});
  // A sink takes nothing until its partition is served: until then the others would take it all.
  p.wait_until_served();
  REQUIRE(p.send({"-c", "8", "-n", "200000", "-d", "60s"}) == 0);
  const auto exit_code = p.stop_agent(60s);
  INFO(p.agent_log());
  REQUIRE(exit_code.has_value());
  CHECK(*exit_code == 0);
  CHECK_THAT(p.agent_log(), Catch::Contains(" 0 lost at shutdown (") && Catch::Contains(" 0 bytes left unread"));
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 200000, duplicates 0, missing 0"));
  CHECK(partitions_with_events(report) == 10);
}

TEST_CASE("with brokerList = embedded the agent runs its own Kafka that can be read while it runs", "[e2e]") {
  Pipeline p;
  const std::string config = std::regex_replace(read_file(source_path("conf/agent.properties")),
                                                std::regex("ports = 5140 5141"), "ports = 0 0");
  p.start_agent(config, "tier2", {"--metrics", "127.0.0.1:0"});
  REQUIRE(!p.bootstrap().empty());
  p.wait_until_served();  // so that each of the ten sinks takes a share of one second's load
  REQUIRE(p.send({"-c", "4", "-n", "20000", "-r", "20000"}) == 0);
  // The seed's settings linger up to 500 ms in librdkafka; the verifier waits for quiet.
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report);
  CHECK(partitions_with_events(report) == 10);
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("sluice --check accepts the seed's file and refuses a broken one naming file and line and key",
          "[e2e][cli]") {
  TempDir dir;
  CHECK(run({bin("sluice"), "--check", "-f", source_path("tests/data/seed.properties"), "-n", "tier2"},
            dir.file("ok.log"), 30s) == 0);
  CHECK_THAT(read_file(dir.file("ok.log")), Catch::Contains("is valid (1 source(s), 1 channel(s), 10 sink(s))"));
  std::ofstream(dir.file("bad.properties"))
      << "a.sources = s\na.channels = c\na.sinks = k\n"
         "a.sources.s.type = multiport_syslogtcp\na.sources.s.ports = 0\n"
         "a.sources.s.channels = c\na.channels.c.type = memory\n"
         "a.channels.c.capacity = lots\na.sinks.k.type = null\na.sinks.k.channel = c\n";
  CHECK(run({bin("sluice"), "--check", "-f", dir.file("bad.properties"), "-n", "a"}, dir.file("bad.log"), 30s) == 1);
  CHECK_THAT(read_file(dir.file("bad.log")),
             Catch::Contains("bad.properties:8: a.channels.c.capacity: \"lots\" is not an integer"));
  // A bad option is refused by --check as by a run.
  CHECK(run({bin("sluice"), "--check", "-f", source_path("tests/data/seed.properties"), "-n", "tier2",
             "--shutdown-timeout=soon"},
            dir.file("option.log"), 30s) == 1);
  CHECK_THAT(read_file(dir.file("option.log")), Catch::Contains("--shutdown-timeout"));
}

TEST_CASE("10000 concurrent connections are served at once and every event of each lands in Kafka",
          "[e2e][connections]") {
  // The agent and the load generator each need 10,000 descriptors. Both inherit this process's
  // limits and raise their soft limit as far as the hard one allows: take the hard limit here too,
  // and (with CAP_SYS_RESOURCE, as CI's root has) raise a hard limit that is too low. A machine that
  // cannot hold the test fails it, rather than passing without having run it.
  constexpr rlim_t kNeeded = 10'200;
  rlimit limit{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &limit) == 0);
  limit.rlim_cur = limit.rlim_max;
  if (limit.rlim_max < kNeeded) limit.rlim_cur = limit.rlim_max = kNeeded;  // refused without the privilege
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  REQUIRE(getrlimit(RLIMIT_NOFILE, &limit) == 0);
  INFO("the file descriptor limit is " << limit.rlim_cur << " (hard " << limit.rlim_max << "): the test needs "
                                       << kNeeded << " (ulimit -Hn, LimitNOFILE, or run it as root)");
  REQUIRE(limit.rlim_cur >= kNeeded);
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), {"acks = 1", "linger.ms = 5"}), "t", {"--metrics", "127.0.0.1:0"});
  double most_open = 0;
  std::atomic<bool> sending{true};
  TestThread watcher([&] {
    const auto give_up = std::chrono::steady_clock::now() + 120s;  // bounded even if the send never returns
    while (sending && std::chrono::steady_clock::now() < give_up) {
      most_open =
          std::max(most_open, prometheus_sum(http_get(p.metrics_port(), "/metrics"), "sluice_source_connections"));
      std::this_thread::sleep_for(200ms);
    }
  });
  const int sent = p.send({"-c", "10000", "-n", "200000", "-r", "25000", "-d", "60s"});
  sending = false;
  watcher.join();
  REQUIRE(sent == 0);
  CHECK(most_open == 10000);
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 200000, duplicates 0, missing 0"));
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("octet-counted RFC 5424 input leaves as one JSON object per event keyed by host", "[e2e][format]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(
      "t.sources = r1\nt.channels = c1\nt.sinks = k1\n"
      "t.sources.r1.type = multiport_syslogtcp\nt.sources.r1.host = 127.0.0.1\nt.sources.r1.ports = 0\n"
      "t.sources.r1.channels = c1\nt.sources.r1.portHeader = port\n"
      "t.channels.c1.type = memory\nt.channels.c1.capacity = 10000\n"
      "t.sinks.k1.type = kafka\nt.sinks.k1.channel = c1\nt.sinks.k1.brokerList = " +
      p.bootstrap() +
      "\nt.sinks.k1.topic = ApacheLog\nt.sinks.k1.format = json\nt.sinks.k1.keyField = host\n"
      "t.sinks.k1.kafka.producer.acks = 1\n");
  REQUIRE(p.send({"-c", "2", "-n", "5000", "--template", "rfc5424", "--framing", "octet"}) == 0);
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 5000, duplicates 0, missing 0"));
  CHECK(partitions_with_events(report) == 1);  // one host, one key, one partition

  sluice::kafka::TopicReader reader(p.bootstrap(), "ApacheLog");
  std::vector<std::string> payloads;
  reader.read_all([&](int32_t, int64_t, int64_t, std::string_view payload) { payloads.emplace_back(payload); },
                  sluice::kafka::ReadOptions{});
  REQUIRE(payloads.size() == 5000);
  const std::regex shape(
      R"(\{"timestamp":\d+,"Facility":16,"Severity":6,"version":1,"host":"lg","app":"httpd",)"
      R"("procid":"4242","msgid":"access","port":\d+,"message":"GET /lg/\d+/\d+\?a* HTTP/1.1 200 512"\})");
  for (const std::string& payload : payloads) {
    INFO(payload);
    REQUIRE(std::regex_match(payload, shape));
  }
}
