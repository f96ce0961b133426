// The Kafka sink's configuration: Flume's and Kafka 0.8's names mapped onto librdkafka's, the
// defaults Sluice chooses, and what it refuses.

#include <catch2/catch.hpp>

#include "sinks/kafka/kafka_sink_config.h"
#include "tests/support/component.h"

using namespace sluice;
using namespace sluice::kafka;
using Catch::Contains;

namespace {

KafkaSinkConfig parse_sink_config(std::map<std::string, std::string> properties) {
  properties.emplace("brokerList", "127.0.0.1:9092");
  return parse_kafka_sink_config(test::component(config::Kind::sink, "k", "kafka", properties));
}

std::string setting(const KafkaSinkConfig& c, const std::string& name) {
  const auto it = c.producer.find(name);
  return it == c.producer.end() ? "<unset>" : it->second.value;
}

}  // namespace

TEST_CASE("Kafka topic names follow Kafka's rule", "[kafka][config]") {
  CHECK(is_valid_topic_name("ApacheLog"));
  CHECK(is_valid_topic_name("a.b_c-9"));
  CHECK(is_valid_topic_name(std::string(249, 'x')));
  CHECK_FALSE(is_valid_topic_name(std::string(250, 'x')));
  for (const char* bad : {"", ".", "..", "postfix/smtpd", "a:b", "a b"}) CHECK_FALSE(is_valid_topic_name(bad));
}

TEST_CASE(
    "the sink's defaults: acks 1, statistics each second, and librdkafka retrying for as long as an outage "
    "lasts when acks >= 1",
    "[kafka][config]") {
  const KafkaSinkConfig c = parse_sink_config({});
  CHECK(c.acks == "1");
  CHECK(c.wait_for_delivery);
  CHECK(setting(c, "statistics.interval.ms") == "1000");
  CHECK(setting(c, "message.timeout.ms") == "0");
  CHECK(c.format == PayloadFormat::body);
  CHECK_FALSE(c.share_producer);
  const KafkaSinkConfig acks0 = parse_sink_config({{"kafka.request.required.acks", "0"}});
  CHECK(acks0.acks == "0");
  CHECK_FALSE(acks0.wait_for_delivery);
  CHECK(setting(acks0, "message.timeout.ms") == "<unset>");
  CHECK(setting(parse_sink_config({{"kafka.producer.delivery.timeout.ms", "5000"}}), "message.timeout.ms") ==
        "<unset>");
}

TEST_CASE("Kafka 0.8 names, Flume's and librdkafka's map onto one setting each", "[kafka][config]") {
  const KafkaSinkConfig c = parse_sink_config({{"kafka.send.buffer.bytes", "1048576"},
                                               {"kafka.queue.buffering.max.message", "50000"},
                                               {"kafka.compression.codec", "2"},
                                               {"kafka.producer.type", "sync"},
                                               {"requiredAcks", "0"}});
  CHECK(setting(c, "socket.send.buffer.bytes") == "1048576");
  CHECK(setting(c, "queue.buffering.max.messages") == "50000");
  CHECK(setting(c, "compression.codec") == "snappy");
  CHECK(c.acks == "0");
  CHECK(c.wait_for_delivery);  // producer.type = sync commits after delivery reports even with acks=0
  CHECK(setting(parse_sink_config({{"kafka.compression.codec", "1"}}), "compression.codec") == "gzip");
  CHECK(setting(parse_sink_config({{"kafka.compression.codec", "0"}}), "compression.codec") == "none");
  CHECK(parse_sink_config({{"kafka.producer.required.acks", "all"}}).acks == "all");
}

TEST_CASE("a setting given twice, under two of its names, is refused naming both lines", "[kafka][config]") {
  CHECK_THROWS_WITH(parse_sink_config({{"requiredAcks", "1"}, {"kafka.producer.acks", "all"}}),
                    Contains("sets acks, already set at"));
  CHECK_THROWS_WITH(parse_sink_config({{"kafka.producer.acks", "1"}, {"kafka.producer.request.required.acks", "all"}}),
                    Contains("acks is set twice"));
}

TEST_CASE("the sink refuses a missing broker list, a bad topic, a producer type and a bootstrap it does not own",
          "[kafka][config]") {
  CHECK_THROWS_WITH(parse_kafka_sink_config(test::component(config::Kind::sink, "k", "kafka", {})),
                    Contains("a.sinks.k.brokerList: is missing"));
  CHECK_THROWS_WITH(parse_sink_config({{"topic", "a/b"}}), Contains("is not a Kafka topic name"));
  CHECK_THROWS_WITH(parse_sink_config({{"kafka.producer.type", "turbo"}}),
                    Contains("\"turbo\" is not one of async sync"));
  CHECK_THROWS_WITH(parse_sink_config({{"kafka.producer.bootstrap.servers", "x:1"}}),
                    Contains("set the brokers with brokerList"));
  CHECK_THROWS_WITH(parse_sink_config({{"topic", "logs-%{host"}}), Contains("%{ needs a header name and a closing }"));
  CHECK_THROWS_WITH(parse_sink_config({{"topic", "logs/%{host}"}}), Contains("its text outside %{...}"));
  CHECK_THROWS_WITH(parse_sink_config({{"maxTakesInFlight", "65"}}), Contains("is not an integer in [1, 64]"));
}

TEST_CASE("event headers: a key is hashed as Java does, a topic from the event only with allowTopicOverride",
          "[kafka][config]") {
  const KafkaSinkConfig keyed = parse_sink_config({{"keyField", "host"}});
  CHECK(keyed.key_header.name == "host");
  CHECK(keyed.key_header.field == EventField::host);
  CHECK(setting(keyed, "partitioner") == "murmur2_random");
  CHECK(setting(parse_sink_config({{"keyField", "host"}, {"kafka.producer.partitioner", "random"}}), "partitioner") ==
        "random");
  CHECK(parse_sink_config({{"keyField", "colour"}}).key_header.name == "colour");  // one an interceptor sets
  CHECK(parse_sink_config({}).key_header.name == "key");                           // Flume's key header
  CHECK(parse_sink_config({{"partitionIdHeader", "Facility"}}).partition_header.field == EventField::facility);
  CHECK(parse_sink_config({{"topicHeader", "app"}}).topic_header.field == EventField::app);
  CHECK(parse_sink_config({{"topicHeader", "app"}, {"allowTopicOverride", "false"}}).topic_header.empty());
  CHECK(parse_sink_config({}).topic_header.name == "topic");  // Flume's: set by an interceptor, syslog has none
  const KafkaSinkConfig templated = parse_sink_config({{"topic", "logs-%{dc}.%{host}"}});
  REQUIRE(templated.topic_template.parts.size() == 4);
  CHECK(templated.topic_template.parts[1].header.name == "dc");
  CHECK(templated.topic_template.parts[2].text == ".");
  CHECK(parse_sink_config({{"useFlumeEventFormat", "true"}}).flume_event_format);
  CHECK(parse_sink_config({{"format", "json"}}).format == PayloadFormat::json);
  CHECK(parse_sink_config({{"kafka.topic", "t2"}, {"defaultPartitionId", "3"}, {"flumeBatchSize", "50"}}).partition ==
        3);
}

TEST_CASE("enable.idempotence without acks = all is refused when the file is read, not at start", "[kafka][config]") {
  const auto component = test::component(
      config::Kind::sink, "k", "kafka",
      {{"brokerList", "embedded"}, {"kafka.producer.enable.idempotence", "true"}, {"kafka.producer.acks", "1"}});
  CHECK_THROWS_WITH(kafka::parse_kafka_sink_config(component),
                    Catch::Contains("enable.idempotence = true needs acks = all (acks is 1)"));
  const auto fine = test::component(
      config::Kind::sink, "k", "kafka",
      {{"brokerList", "embedded"}, {"kafka.producer.enable.idempotence", "true"}, {"kafka.producer.acks", "all"}});
  CHECK_NOTHROW(kafka::parse_kafka_sink_config(fine));
}

TEST_CASE("Flume users' spellings: kafka.flumeBatchSize, and SASL credentials as Kafka's JAAS line",
          "[kafka][config]") {
  CHECK(parse_sink_config({{"kafka.flumeBatchSize", "250"}}).batch_size == 250);
  const KafkaSinkConfig c = parse_sink_config(
      {{"kafka.producer.security.protocol", "SASL_PLAINTEXT"},
       {"kafka.producer.sasl.mechanism", "SCRAM-SHA-512"},
       {"kafka.producer.sasl.jaas.config",
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"flume\" password=\"pw\";"}});
  CHECK(setting(c, "sasl.username") == "flume");
  CHECK(setting(c, "sasl.password") == "pw");
  CHECK(setting(c, "sasl.jaas.config") == "<unset>");
  CHECK_THROWS_WITH(
      parse_sink_config(
          {{"kafka.producer.sasl.jaas.config", "com.sun.security.auth.module.Krb5LoginModule required;"}}),
      Contains("k.kafka.producer.sasl.jaas.config: login module com.sun.security.auth.module.Krb5LoginModule"));
  CHECK_THROWS_WITH(
      parse_sink_config({{"kafka.producer.sasl.username", "a"},
                         {"kafka.producer.sasl.jaas.config",
                          "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"b\" "
                          "password=\"c\";"}}),
      Contains("sets sasl.username, already set"));
}
