// End to end: real processes (the Kafka mock broker, the agent, the load generator, the
// verifier) on loopback, as a user runs them.

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>

#include "tests/support/pipeline.h"

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
  p.start_agent(ten_sink_config(p.bootstrap(), {"acks = 0", "compression.codec = snappy", "linger.ms = 20"}));
  REQUIRE(p.send({"-c", "8", "-n", "200000", "-d", "60s"}) == 0);
  const auto exit_code = p.stop_agent(60s);
  INFO(p.agent_log());
  REQUIRE(exit_code.has_value());
  CHECK(*exit_code == 0);
  CHECK_THAT(p.agent_log(), Catch::Contains(" 0 lost at shutdown, 0 bytes left unread"));
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
  p.start_agent(config, "tier2");
  REQUIRE(!p.bootstrap().empty());
  REQUIRE(p.send({"-c", "4", "-n", "20000", "-r", "20000"}) == 0);
  // The seed's settings linger up to 500 ms in librdkafka; the verifier waits for quiet.
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report);
  CHECK(partitions_with_events(report) == 10);
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("sluice --check accepts the seed's file and refuses a broken one naming file and line and key", "[e2e][cli]") {
  TempDir dir;
  CHECK(run({bin("sluice"), "--check", "-f", source_path("tests/data/seed.properties"), "-n", "tier2"},
            dir.file("ok.log"), 30s) == 0);
  CHECK_THAT(read_file(dir.file("ok.log")), Catch::Contains("is valid (1 source(s), 1 channel(s), 10 sink(s))"));
  std::ofstream(dir.file("bad.properties")) << "a.sources = s\na.channels = c\na.sinks = k\n"
                                               "a.sources.s.type = multiport_syslogtcp\na.sources.s.ports = 0\n"
                                               "a.sources.s.channels = c\na.channels.c.type = memory\n"
                                               "a.channels.c.capacity = lots\na.sinks.k.type = null\na.sinks.k.channel = c\n";
  CHECK(run({bin("sluice"), "--check", "-f", dir.file("bad.properties"), "-n", "a"}, dir.file("bad.log"), 30s) == 1);
  CHECK_THAT(read_file(dir.file("bad.log")),
             Catch::Contains("bad.properties:8: a.channels.c.capacity: \"lots\" is not an integer"));
}
