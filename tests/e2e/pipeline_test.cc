// End to end: real processes (the Kafka mock broker, the agent, the load generator, the
// verifier) on loopback, as a user runs them.

#include <signal.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/process.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

// The seed's shape: one source on two ports, a memory channel, ten sinks pinned to partitions 0-9.
std::string ten_sink_config(const std::string& brokers, const std::string& acks = "0") {
  std::string text =
      "t.sources = r1\nt.channels = c1\nt.sinks = k0 k1 k2 k3 k4 k5 k6 k7 k8 k9\n"
      "t.sources.r1.type = multiport_syslogtcp\nt.sources.r1.host = 127.0.0.1\nt.sources.r1.ports = 0 0\n"
      "t.sources.r1.channels = c1\nt.sources.r1.batchSize = 1000\n"
      "t.channels.c1.type = memory\nt.channels.c1.capacity = 60000\nt.channels.c1.transactionCapacity = 8000\n";
  for (int i = 0; i < 10; ++i) {
    const std::string k = "t.sinks.k" + std::to_string(i);
    text += k + ".type = org.apache.flume.sink.kafka.KafkaSink\n" + k + ".channel = c1\n" + k +
            ".kafka.bootstrap.servers = " + brokers + "\n" + k + ".kafka.topic = ApacheLog\n" + k +
            ".defaultPartitionId = " + std::to_string(i) + "\n" + k + ".kafka.producer.acks = " + acks + "\n" + k +
            ".kafka.producer.compression.codec = snappy\n" + k + ".kafka.producer.linger.ms = 20\n";
  }
  return text;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::vector<std::string> targets_from(const std::string& ready) {
  std::vector<std::string> args;
  std::istringstream ports(value_of(ready, "source.r1.ports"));
  for (std::string port; ports >> port;) args.insert(args.end(), {"-t", "127.0.0.1:" + port});
  return args;
}

int partitions_with_events(const std::string& report) {
  std::smatch line;
  if (!std::regex_search(report, line, std::regex("partitions:([^\n]*)"))) return 0;
  int n = 0;
  const std::string text = line[1];
  static const std::regex entry(R"( (\d+)=(\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry);
       it != std::sregex_iterator(); ++it)
    if (std::stoull((*it)[2]) > 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("200000 events over 8 connections on two ports land once each in all 10 partitions and SIGTERM exits 0",
          "[e2e]") {
  TempDir dir;
  ChildProcess broker({bin("sluice-kafka-mock"), "--topic", "ApacheLog", "--partitions", "10", "--bootstrap-file",
                       dir.file("bootstrap")},
                      dir.file("broker.log"));
  const std::string brokers = wait_for_file(dir.file("bootstrap"), 20s);
  REQUIRE(!brokers.empty());
  const std::string bootstrap = brokers.substr(0, brokers.find('\n'));

  write(dir.file("agent.properties"), ten_sink_config(bootstrap));
  ChildProcess agent({bin("sluice"), "-f", dir.file("agent.properties"), "-n", "t", "--ready-file", dir.file("ready"),
                      "--status-interval", "1s"},
                     dir.file("agent.log"));
  const std::string ready = wait_for_file(dir.file("ready"), 20s);
  INFO(read_file(dir.file("agent.log")));
  REQUIRE(!ready.empty());

  std::vector<std::string> send{bin("sluice-loadgen"), "-c", "8", "-n", "200000", "-d", "60s", "-q",
                                "--summary-json", dir.file("sent.json")};
  const auto targets = targets_from(ready);
  REQUIRE(targets.size() == 4);  // two ports
  send.insert(send.end(), targets.begin(), targets.end());
  REQUIRE(run(send, dir.file("loadgen.log"), 90s) == 0);

  agent.signal(SIGTERM);
  const auto exit_code = agent.wait(60s);
  INFO(read_file(dir.file("agent.log")));
  REQUIRE(exit_code.has_value());
  CHECK(*exit_code == 0);
  CHECK_THAT(read_file(dir.file("agent.log")), Catch::Contains("0 lost at shutdown"));

  const int verified = run({bin("sluice-loadgen"), "--verify", "--bootstrap", bootstrap, "--topic", "ApacheLog",
                            "--expect", dir.file("sent.json"), "--idle", "1s", "--timeout", "60s"},
                           dir.file("verify.log"), 90s);
  const std::string report = read_file(dir.file("verify.log"));
  INFO(report);
  CHECK(verified == 0);
  CHECK_THAT(report, Catch::Contains("unique 200000, duplicates 0, missing 0"));
  CHECK(partitions_with_events(report) == 10);
}

TEST_CASE("with brokerList = embedded the agent runs its own Kafka that can be read while it runs", "[e2e]") {
  TempDir dir;
  std::string config = read_file(source_path("conf/agent.properties"));
  config = std::regex_replace(config, std::regex("ports = 5140 5141"), "ports = 0 0");
  write(dir.file("agent.properties"), config);
  ChildProcess agent({bin("sluice"), "-f", dir.file("agent.properties"), "-n", "tier2", "--ready-file",
                      dir.file("ready")},
                     dir.file("agent.log"));
  const std::string ready = wait_for_file(dir.file("ready"), 20s);
  INFO(read_file(dir.file("agent.log")));
  REQUIRE(!ready.empty());
  const std::string bootstrap = value_of(ready, "embedded.bootstrap");
  REQUIRE(!bootstrap.empty());

  std::vector<std::string> send{bin("sluice-loadgen"), "-c", "4", "-n", "20000", "-r", "20000", "-q",
                                "--summary-json", dir.file("sent.json")};
  const auto targets = targets_from(ready);
  send.insert(send.end(), targets.begin(), targets.end());
  REQUIRE(run(send, dir.file("loadgen.log"), 60s) == 0);
  // The seed's settings linger up to 500 ms in librdkafka; the verifier waits for quiet.
  const int verified = run({bin("sluice-loadgen"), "--verify", "--bootstrap", bootstrap, "--expect",
                            dir.file("sent.json"), "--idle", "1500ms", "--timeout", "60s"},
                           dir.file("verify.log"), 90s);
  INFO(read_file(dir.file("verify.log")));
  CHECK(verified == 0);
  CHECK(partitions_with_events(read_file(dir.file("verify.log"))) == 10);
  agent.signal(SIGTERM);
  CHECK(agent.wait(60s) == std::optional<int>(0));
}

TEST_CASE("sluice --check accepts the seed's file and refuses a broken one naming file and line and key", "[e2e][cli]") {
  TempDir dir;
  CHECK(run({bin("sluice"), "--check", "-f", source_path("tests/data/seed.properties"), "-n", "tier2"},
            dir.file("ok.log"), 30s) == 0);
  CHECK_THAT(read_file(dir.file("ok.log")), Catch::Contains("is valid (1 source(s), 1 channel(s), 10 sink(s))"));
  write(dir.file("bad.properties"), "a.sources = s\na.channels = c\na.sinks = k\n"
                                    "a.sources.s.type = multiport_syslogtcp\na.sources.s.ports = 0\n"
                                    "a.sources.s.channels = c\na.channels.c.type = memory\n"
                                    "a.channels.c.capacity = lots\na.sinks.k.type = null\na.sinks.k.channel = c\n");
  CHECK(run({bin("sluice"), "--check", "-f", dir.file("bad.properties"), "-n", "a"}, dir.file("bad.log"), 30s) == 1);
  CHECK_THAT(read_file(dir.file("bad.log")),
             Catch::Contains("bad.properties:8: a.channels.c.capacity: \"lots\" is not an integer"));
}
