#include <catch2/catch.hpp>

#include "agent/agent.h"
#include "agent/component_registry.h"
#include "agent/config/properties_file.h"
#include "sinks/kafka/kafka_sink_config.h"
#include "sources/syslog_tcp/syslog_tcp_config.h"
#include "tests/support/process.h"

using namespace sluice;

namespace {

config::AgentConfig load(const std::string& text, const std::string& agent = "a") {
  return config::assemble(config::parse_properties(text, "test.properties"), agent, "test.properties");
}

}  // namespace

TEST_CASE("the seed's Flume configuration loads unchanged and builds ten pinned sinks", "[config][seed]") {
  const std::string file = test::source_path("tests/data/seed.properties");
  const config::AgentConfig model =
      config::assemble(config::parse_properties(config::read_config_file(file), file), "tier2", file);
  REQUIRE(model.sources.size() == 1);
  REQUIRE(model.channels.size() == 1);
  REQUIRE(model.sinks.size() == 10);
  CHECK(model.sources[0].type == "multiport_syslogtcp");
  CHECK(model.sinks[9].type == "com.igloosec.KafkaSink");

  const auto source = syslog_tcp::parse_syslog_tcp_config(model.sources[0]);
  CHECK(source.ports == std::vector<uint16_t>{7000});
  CHECK(source.batch_size == 8000);
  CHECK(source.read_buffer_size.bytes == 16777216);
  CHECK(source.host == "en2.igloosecurity.co.kr");

  for (int i = 0; i < 10; ++i) {
    const auto sink = kafka::parse_kafka_sink_config(model.sinks[static_cast<size_t>(i)]);
    CHECK(sink.partition == i);
    CHECK(sink.topic == "ApacheLog");
    CHECK(sink.bootstrap == "en2.igloosecurity.co.kr:9092");
    CHECK(sink.acks == "0");
    CHECK_FALSE(sink.wait_for_delivery);
    CHECK(sink.producer.at("compression.codec").value == "snappy");
    CHECK(sink.producer.at("socket.send.buffer.bytes").value == "16777216");
    CHECK(sink.producer.at("batch.num.messages").value == "500");
    CHECK(sink.producer.at("queue.buffering.max.ms").value == "500");
    CHECK(sink.producer.at("queue.buffering.max.messages").value == "50000");  // from the seed's typo
  }
  // Construction is what --check does: every component validated, nothing started.
  Agent agent(model);
  CHECK(agent.sink_count() == 10);
}

TEST_CASE("conf/agent.properties is the seed pointed at loopback and the embedded Kafka", "[config][seed]") {
  const std::string file = test::source_path("conf/agent.properties");
  const config::AgentConfig model =
      config::assemble(config::parse_properties(config::read_config_file(file), file), "tier2", file);
  Agent agent(model);
  CHECK(agent.sink_count() == 10);
  CHECK(kafka::parse_kafka_sink_config(model.sinks[0]).bootstrap == "embedded");
  CHECK(syslog_tcp::parse_syslog_tcp_config(model.sources[0]).ports == std::vector<uint16_t>{5140, 5141});
}

TEST_CASE("properties syntax accepts every separator and comments and continuation lines and escapes",
          "[config][properties]") {
  const auto flat = config::parse_properties(
      "# comment\n"
      "! also a comment\n"
      "  a.x = 1\n"
      "a.y:2\n"
      "a.z 3\n"
      "a.long = one \\\n"
      "         two\r\n"
      "a.esc = tab\\there\\u0041\n"
      "a\\=b = c\n"
      "a.empty =\n",
      "f");
  REQUIRE(flat.size() == 7);
  CHECK(flat[0].key == "a.x");
  CHECK(flat[0].value == "1");
  CHECK(flat[0].where.line == 3);
  CHECK(flat[1].value == "2");
  CHECK(flat[2].key == "a.z");
  CHECK(flat[2].value == "3");
  CHECK(flat[3].value == "one two");
  CHECK(flat[3].where.line == 6);
  CHECK(flat[4].value ==
        "tab\there"
        "A");
  CHECK(flat[5].key == "a=b");
  CHECK(flat[6].value == "");
}

TEST_CASE("keys of other agents in the same file are ignored", "[config][properties]") {
  const auto model = load(
      "a.sources = s\na.channels = c\na.sinks = k\n"
      "a.sources.s.type = multiport_syslogtcp\na.sources.s.ports = 0\na.sources.s.channels = c\n"
      "a.channels.c.type = memory\n"
      "a.sinks.k.type = null\na.sinks.k.channel = c\n"
      "b.sources = whatever\nb.sources.whatever.type = nonsense\n");
  CHECK(model.sources.size() == 1);
  CHECK(model.sinks[0].channels == std::vector<std::string>{"c"});
}

TEST_CASE("readBufferSize is also accepted under Flume's code name readBufferBytes", "[config]") {
  const std::string base =
      "a.sources = s\na.channels = c\na.sinks = k\n"
      "a.sources.s.type = multiport_syslogtcp\na.sources.s.ports = 0\na.sources.s.channels = c\n"
      "a.channels.c.type = memory\na.sinks.k.type = null\na.sinks.k.channel = c\n";
  CHECK(syslog_tcp::parse_syslog_tcp_config(load(base + "a.sources.s.readBufferBytes = 32k\n").sources[0])
            .read_buffer_size.bytes == 32768);
  CHECK(syslog_tcp::parse_syslog_tcp_config(load(base + "a.sources.s.readBufferSize = 1m\n").sources[0])
            .read_buffer_size.bytes == 1048576);
  CHECK_THROWS_WITH(syslog_tcp::parse_syslog_tcp_config(
                        load(base + "a.sources.s.readBufferSize = 1m\na.sources.s.readBufferBytes = 2m\n").sources[0]),
                    Catch::Contains("a second time"));
}
