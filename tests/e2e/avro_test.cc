// Flume's tiers with Sluice on both: a tier-1 agent (syslog in, a file channel, an Avro sink) sends
// to a collector (an Avro source, a file channel, Kafka sinks); sluice-loadgen feeds the tier-1
// agent and the verifier reads Kafka back. Faults: the collector SIGKILLed mid-stream.

#include <signal.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

// The seed's shape (acks=all, a file channel) with an Avro source on `ports` answering once its
// events are on the channel's disk.
std::string collector_config(Pipeline& p, const std::string& ports) {
  std::string config =
      with_channel(ten_sink_config(p.bootstrap(), kAcksAll),
                   "t.channels.c1.type = file\nt.channels.c1.transactionCapacity = 8000\nt.channels.c1.dataDir = " +
                       p.dir().file("collector") + "\n");
  config = std::regex_replace(config, std::regex("t\\.sources\\.r1\\.type = multiport_syslogtcp"),
                              "t.sources.r1.type = avro");
  config = std::regex_replace(config, std::regex("t\\.sources\\.r1\\.ports = 0 0"), "t.sources.r1.ports = " + ports);
  return config + "t.sources.r1.ackAfter = channel\n";
}

// A tier-1 agent's syslog source on `port` and file channel c.
std::string tier1_body(Pipeline& p, uint16_t port) {
  return "e.sources.s.type = multiport_syslogtcp\ne.sources.s.host = 127.0.0.1\ne.sources.s.ports = " +
         std::to_string(port) +
         "\ne.sources.s.channels = c\n"
         "e.channels.c.type = file\ne.channels.c.transactionCapacity = 1000\ne.channels.c.dataDir = " +
         p.dir().file("tier1") + "\n";
}

// An Avro sink `name` on channel c to the collector on `collector`.
std::string avro_sink(const std::string& name, uint16_t collector) {
  const std::string k = "e.sinks." + name;
  return k + ".type = avro\n" + k + ".channel = c\n" + k + ".hostname = 127.0.0.1\n" + k +
         ".port = " + std::to_string(collector) + "\n" + k + ".batch-size = 1000\n" + k + ".request-timeout = 5000\n";
}

// Syslog on `port`, a file channel, an Avro sink `a` to the collector on `collector`.
std::string tier1_config(Pipeline& p, uint16_t port, uint16_t collector) {
  return "e.sources = s\ne.channels = c\ne.sinks = a\n" + tier1_body(p, port) + avro_sink("a", collector);
}

}  // namespace

TEST_CASE("an Avro collector SIGKILLed mid-stream and restarted: its Avro sender sends again, nothing missing",
          "[e2e][avro]") {
  Pipeline p;
  p.start_broker();
  const std::vector<uint16_t> ports = free_ports(2);
  const uint16_t collector = ports[0], syslog = ports[1];
  p.start_agent(collector_config(p, std::to_string(collector)), "t", {"--metrics", "127.0.0.1:0"});
  std::ofstream(p.dir().file("tier1.properties")) << tier1_config(p, syslog, collector);
  ChildProcess tier1({bin("sluice"), "-f", p.dir().file("tier1.properties"), "-n", "e"}, p.dir().file("tier1.log"));
  p.send_to({syslog});
  constexpr int kEvents = 100000;
  REQUIRE(eventually(
      [&] {
        return p.send({"-c", "2", "-n", std::to_string(kEvents), "-r", "20000"}) == 0;
      },
      30s, 500ms));
  const bool some_acknowledged =
      eventually([&] { return p.metric("sluice_source_events_acknowledged_total") >= 10000; }, 60s, 20ms);
  INFO(read_file(p.dir().file("tier1.log")) << p.agent_log());
  REQUIRE(some_acknowledged);
  p.agent().signal(SIGKILL);
  REQUIRE(p.agent().wait(10s).has_value());
  // The same port again: the tier-1 agent's sink rolls back what was not answered and sends it again.
  p.start_agent(collector_config(p, std::to_string(collector)), "t", {"--metrics", "127.0.0.1:0"});
  std::string report;
  const bool complete = p.verify_until_complete(report, 120s, 1s);
  INFO(report << read_file(p.dir().file("tier1.log")) << p.agent_log());
  CHECK(complete);
  CHECK_THAT(report, Catch::Contains("unique " + std::to_string(kEvents)));
  // Duplicates only where the kill fell between a call's events reaching the collector's disk and
  // its answer reaching the sender: one call of at most batch-size events.
  CHECK(duplicates_in(report) <= 1000);
  tier1.signal(SIGTERM);
  CHECK(tier1.wait(30s) == std::optional<int>(0));
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("a load_balance group of two Avro sinks to two collector ports: both deliver, every event once",
          "[e2e][avro]") {
  Pipeline p;
  p.start_broker();
  const std::vector<uint16_t> ports = free_ports(3);
  p.start_agent(collector_config(p, std::to_string(ports[0]) + " " + std::to_string(ports[1])), "t");
  std::ofstream(p.dir().file("tier1.properties"))
      << "e.sources = s\ne.channels = c\ne.sinks = a b\ne.sinkgroups = g\ne.sinkgroups.g.sinks = a b\n"
      << "e.sinkgroups.g.processor.type = load_balance\ne.sinkgroups.g.processor.selector = round_robin\n"
      << tier1_body(p, ports[2]) << avro_sink("a", ports[0]) << avro_sink("b", ports[1]);
  ChildProcess tier1({bin("sluice"), "-f", p.dir().file("tier1.properties"), "-n", "e", "--metrics", "127.0.0.1:0",
                      "--ready-file", p.dir().file("tier1.ready")},
                     p.dir().file("tier1.log"));
  const std::string ready = wait_for_file(p.dir().file("tier1.ready"), 20s);
  REQUIRE_FALSE(ready.empty());
  p.send_to({ports[2]});
  REQUIRE(p.send({"-c", "2", "-n", "50000", "-r", "25000"}) == 0);
  std::string report;
  const bool complete = p.verify_until_complete(report, 60s, 500ms);
  INFO(report << read_file(p.dir().file("tier1.log")) << p.agent_log());
  CHECK(complete);
  CHECK_THAT(report, Catch::Contains("unique 50000, duplicates 0, missing 0"));
  const std::string metrics = http_get(std::stoi(value_of(ready, "metrics.port")), "/metrics");
  for (const char* sink : {"a", "b"}) {  // each took its turns
    std::smatch m;
    const std::regex calls(std::string("sluice_sink_avro_calls_total\\{sink=\"") + sink +
                           "\",outcome=\"ok\"\\} ([0-9.e+]+)");
    INFO("sink " << sink << "\n" << metrics);
    REQUIRE(std::regex_search(metrics, m, calls));
    CHECK(std::stod(m[1].str()) > 0);
  }
  tier1.signal(SIGTERM);
  CHECK(tier1.wait(30s) == std::optional<int>(0));
}
