// Flume's interceptors in the running agent: what they set reaches Kafka as the sink was told
// (JSON, record headers, the key), and what they filter out is counted, never silently gone.

#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "loadgen/event_template.h"
#include "sinks/kafka/topic_reader.h"
#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

std::string agent_with(const std::string& bootstrap, const std::string& interceptors, const std::string& sink) {
  return "t.sources = r1\nt.channels = c1\nt.sinks = k1\n"
         "t.sources.r1.type = multiport_syslogtcp\nt.sources.r1.host = 127.0.0.1\nt.sources.r1.ports = 0\n"
         "t.sources.r1.channels = c1\n" +
         interceptors +
         "t.channels.c1.type = memory\nt.channels.c1.capacity = 10000\n"
         "t.sinks.k1.type = kafka\nt.sinks.k1.channel = c1\nt.sinks.k1.brokerList = " +
         bootstrap + "\nt.sinks.k1.topic = ApacheLog\nt.sinks.k1.kafka.producer.acks = 1\n" + sink;
}

}  // namespace

TEST_CASE("interceptors' headers reach Kafka: a static value, an extracted group as key and record header, in JSON",
          "[e2e][interceptors]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(agent_with(p.bootstrap(),
                           "t.sources.r1.interceptors = dc path\n"
                           "t.sources.r1.interceptors.dc.type = static\n"
                           "t.sources.r1.interceptors.dc.key = datacenter\n"
                           "t.sources.r1.interceptors.dc.value = ams1\n"
                           "t.sources.r1.interceptors.path.type = regex_extractor\n"
                           "t.sources.r1.interceptors.path.regex = GET /lg/(\\\\d+)/\n"
                           "t.sources.r1.interceptors.path.serializers = c\n"
                           "t.sources.r1.interceptors.path.serializers.c.name = key\n",
                           "t.sinks.k1.format = json\nt.sinks.k1.kafka.headers = datacenter key\n"));
  REQUIRE(p.send({"-c", "2", "-n", "4000"}) == 0);
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 4000, duplicates 0, missing 0"));
  sluice::kafka::TopicReader reader(p.bootstrap(), "ApacheLog");
  size_t read = 0;
  std::set<std::string> keys;
  const std::regex shape(R"(\{.*"datacenter":"ams1","key":"\d+","message":".*GET /lg/\d+/.*\})");
  reader.read_all(
      [&](int32_t, int64_t, int64_t, std::string_view payload) {
        ++read;
        keys.insert(reader.key());
        INFO(payload);
        CHECK(std::regex_match(std::string(payload), shape));
        CHECK(reader.headers() == std::vector<std::string>{"datacenter=ams1", "key=" + reader.key()});
      },
      sluice::kafka::ReadOptions{});
  CHECK(read == 4000);
  CHECK(keys.size() == 2);  // one key per connection: the group the extractor took
  REQUIRE(p.stop_agent(30s) == 0);
}

TEST_CASE("regex_filter's dropped events are counted in the metrics and the shutdown account, the rest land once",
          "[e2e][interceptors]") {
  Pipeline p;
  p.start_broker();
  // The load generator's lines end their path with the event's sequence number: drop the even ones.
  p.start_agent(agent_with(p.bootstrap(),
                           "t.sources.r1.interceptors = even\n"
                           "t.sources.r1.interceptors.even.type = regex_filter\n"
                           "t.sources.r1.interceptors.even.regex = GET /lg/\\\\d+/\\\\d*[02468]\\\\?\n"
                           "t.sources.r1.interceptors.even.excludeEvents = true\n",
                           ""),
                "t", {"--metrics", "127.0.0.1:0"});
  REQUIRE(p.send({"-c", "1", "-n", "1000"}) == 0);
  REQUIRE(eventually([&] { return p.stored() == 500; }, 30s));
  // The rest once each, by sequence number: the verifier finds 500 of the 1,000 sent there once
  // each, none twice (its verdict fails for the 500 missing: filtered), and none of them is even:
  // they are the 500 odd ones.
  std::string report;
  p.verify(report);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 500, duplicates 0, missing 500"));
  CHECK_THAT(report, Catch::Contains("unrecognised 0"));
  std::set<uint64_t> stored;
  uint64_t even = 0;
  sluice::kafka::TopicReader reader(p.bootstrap(), "ApacheLog");
  reader.read_all(
      [&](int32_t, int64_t, int64_t, std::string_view payload) {
        const auto id = sluice::loadgen::parse_event_id(payload);
        if (!id) return;
        stored.insert(id->sequence);
        even += id->sequence % 2 == 0;
      },
      sluice::kafka::ReadOptions{});
  CHECK(even == 0);
  CHECK(stored.size() == 500);
  CHECK(p.metric("sluice_source_events_filtered_total") == 500);
  CHECK(p.metric("sluice_source_events_received_total") == 1000);
  REQUIRE(p.stop_agent(30s) == 0);
  const std::vector<ShutdownAccount> accounts = shutdown_accounts(p.agent_log());
  REQUIRE(accounts.size() == 1);
  CHECK(accounts[0].read == 1000);
  CHECK(accounts[0].filtered == 500);
  CHECK(accounts[0].in == 500);
  CHECK(accounts[0].balances());
}
