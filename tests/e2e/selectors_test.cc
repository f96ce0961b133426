// Flume's channel selectors in the running agent: multiplexing sends each event where its header
// says, an optional channel that cannot keep up loses copies (counted) and never holds up the
// required ones or RELP's answers, and a reload that changes a selector applies it to what
// follows, every event once.

#include <signal.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>

#include "sinks/kafka/topic_reader.h"
#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

// A syslog TCP source r1 into `channels` (memory), each with a Kafka sink kN writing `topics[N]`
// through `brokers[N]`; `source` adds the source's lines (its selector).
std::string routed_agent(const std::string& source_type, const std::vector<std::string>& topics,
                         const std::vector<std::string>& brokers, const std::string& source) {
  std::string channels, sinks;
  for (size_t i = 0; i < topics.size(); ++i) {
    channels += (i ? " c" : "c") + std::to_string(i + 1);
    sinks += (i ? " k" : "k") + std::to_string(i + 1);
  }
  std::string text = "t.sources = r1\nt.channels = " + channels + "\nt.sinks = " + sinks + "\n" +
                     "t.sources.r1.type = " + source_type +
                     "\nt.sources.r1.host = 127.0.0.1\nt.sources.r1.ports = 0 0\n" +
                     "t.sources.r1.channels = " + channels + "\n" + source;
  for (size_t i = 0; i < topics.size(); ++i) {
    const std::string c = "t.channels.c" + std::to_string(i + 1), k = "t.sinks.k" + std::to_string(i + 1);
    text += c + ".type = memory\n" + c + ".capacity = 20000\n" + c + ".transactionCapacity = 1000\n";
    text += k + ".type = kafka\n" + k + ".channel = c" + std::to_string(i + 1) + "\n" + k +
            ".brokerList = " + brokers[i] + "\n" + k + ".topic = " + topics[i] + "\n" + k +
            ".kafka.producer.acks = all\n" + k + ".kafka.producer.enable.idempotence = true\n" + k +
            ".kafka.producer.linger.ms = 5\n";
  }
  return text;
}

// Every message in `topic`: its payload, counted.
std::map<std::string, uint64_t> payloads(const std::string& bootstrap, const std::string& topic) {
  std::map<std::string, uint64_t> seen;
  sluice::kafka::TopicReader reader(bootstrap, topic);
  reader.read_all([&](int32_t, int64_t, int64_t, std::string_view payload) { ++seen[std::string(payload)]; },
                  sluice::kafka::ReadOptions{});
  return seen;
}

uint64_t total(const std::map<std::string, uint64_t>& seen) {
  uint64_t sum = 0;
  for (const auto& [payload, count] : seen) sum += count;
  return sum;
}

bool all_contain(const std::map<std::string, uint64_t>& seen, const std::string& text) {
  for (const auto& [payload, count] : seen)
    if (payload.find(text) == std::string::npos || count != 1) return false;
  return true;
}

}  // namespace

TEST_CASE("multiplexing on Severity: errors to one topic, the rest to another, and an optional copy of the rest",
          "[e2e][selectors]") {
  Pipeline p;
  p.start_broker();
  std::ofstream(p.dir().file("lines.txt")) << "<11>Dec  4 05:00:00 web01 app: an error\n"
                                           << "<14>Dec  4 05:00:00 web01 app: some info\n";
  p.start_agent(routed_agent("syslogtcp", {"Errors", "Rest", "Copies"}, {p.bootstrap(), p.bootstrap(), p.bootstrap()},
                             "t.sources.r1.selector.type = multiplexing\n"
                             "t.sources.r1.selector.header = Severity\n"
                             "t.sources.r1.selector.mapping.3 = c1\n"
                             "t.sources.r1.selector.optional.6 = c3\n"
                             "t.sources.r1.selector.default = c2\n"),
                "t", {"--metrics", "127.0.0.1:0"});
  REQUIRE(p.send({"-c", "1", "-n", "6000", "--replay", p.dir().file("lines.txt")}) == 0);
  std::map<std::string, uint64_t> errors, rest, copies;
  CHECK(eventually(
      [&] {
        errors = payloads(p.bootstrap(), "Errors");
        rest = payloads(p.bootstrap(), "Rest");
        copies = payloads(p.bootstrap(), "Copies");
        return total(errors) == 3000 && total(rest) == 3000 && total(copies) == 3000;
      },
      30s));
  CHECK(errors.size() == 3000);  // each once
  CHECK(all_contain(errors, "an error"));
  CHECK(all_contain(rest, "some info"));
  CHECK(copies == rest);
  CHECK(p.metric("sluice_source_optional_copies_dropped_total") == 0);
  CHECK(p.metric("sluice_source_events_unrouted_total") == 0);
  REQUIRE(p.stop_agent(30s) == 0);
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.read == 6000);
  CHECK(account.in == 9000);  // the copies are events in their channel too
  CHECK(account.balances());
}

TEST_CASE(
    "an optional channel whose Kafka is unreachable drops its copies, counted, while RELP's answers and the "
    "required channel's deliveries go on: every event once",
    "[e2e][selectors][relp]") {
  Pipeline p;
  p.start_broker();
  // c2's sink writes to a port nothing listens on: it takes a batch and never commits it, and c2
  // (capacity 2,000) fills; from then on its copies are dropped.
  std::string config = routed_agent("relp", {"ApacheLog", "Nowhere"}, {p.bootstrap(), "127.0.0.1:9"},
                                    "t.sources.r1.selector.optional = c2\n");
  config = std::regex_replace(config, std::regex("t.channels.c2.capacity = 20000"), "t.channels.c2.capacity = 2000");
  p.start_agent(config, "t", {"--metrics", "127.0.0.1:0", "--shutdown-timeout", "3s"});
  REQUIRE(p.send({"--relp", "-c", "2", "-n", "20000"}) == 0);
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 20000, duplicates 0, missing 0"));
  CHECK(p.metric("sluice_source_events_acknowledged_total") == 20000);
  const double dropped = p.metric("sluice_source_optional_copies_dropped_total{source=\"r1\",channel=\"c2\"}");
  CHECK(dropped >= 20000 - 2000);
  CHECK(p.stop_agent(30s).has_value());
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.optional_dropped == static_cast<uint64_t>(dropped));
  CHECK(account.in == 20000 + (20000 - account.optional_dropped));
  CHECK(account.balances());
  CHECK_THAT(p.agent_log(), Catch::Contains("optional channel c2 is full"));
}

TEST_CASE("a reload that changes a source's selector routes what follows its way: every event once",
          "[e2e][reload][selectors]") {
  Pipeline p;
  p.start_broker();
  // The same ports before and after (the senders reconnect there), only the mapping changes.
  const std::string base =
      with_fixed_ports(routed_agent("syslogtcp", {"ApacheLog", "Other"}, {p.bootstrap(), p.bootstrap()},
                                    "t.sources.r1.selector.type = multiplexing\n"
                                    "t.sources.r1.selector.header = Facility\n"));
  const auto routed_to = [&](const std::string& channel) {
    return base + "t.sources.r1.selector.mapping.16 = " + channel + "\n";  // the load generator's local0
  };
  p.start_agent(routed_to("c1"), "t", {"--metrics", "127.0.0.1:0"});
  REQUIRE(p.send_until_stored(20000, 20000));
  const double applied = p.metric("sluice_config_reloads_total{result=\"applied\"}");
  std::ofstream(p.dir().file("agent.properties")) << routed_to("c2");
  p.agent().signal(SIGHUP);
  REQUIRE(eventually([&] { return p.metric("sluice_config_reloads_total{result=\"applied\"}") == applied + 1; }, 30s));
  REQUIRE(p.send({"-c", "2", "-n", "20000"}) == 0);
  std::map<std::string, uint64_t> first, second;
  CHECK(eventually(
      [&] {
        first = payloads(p.bootstrap(), "ApacheLog");
        second = payloads(p.bootstrap(), "Other");
        return total(first) + total(second) >= 40000;
      },
      30s));
  CHECK(total(first) == 20000);
  CHECK(total(second) == 20000);
  // Each run of the load generator numbers its events alike: each topic holds one run's, each once.
  CHECK(first.size() == 20000);
  CHECK(second.size() == 20000);
  CHECK(p.stop_agent(30s) == 0);
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.lost == 0);
  CHECK(account.balances());
}
