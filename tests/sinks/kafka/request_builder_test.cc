#include <catch2/catch.hpp>

#include "sinks/kafka/kafka_sink_probe.h"
#include "sinks/kafka/request_builder.h"
#include "tests/support/component.h"
#include "tests/support/parsed_batch.h"

using namespace sluice;
using sluice::test::parsed_batch;

namespace {

// What the builder makes of a take of `batches` with the sink's `properties`: each message's
// payload, key and partition, in order.
std::vector<std::tuple<std::string, std::string, int32_t>> built_messages(std::map<std::string, std::string> properties,
                                                                          std::vector<EventBatch> batches) {
  properties.emplace("brokerList", "127.0.0.1:1");
  properties.emplace("topic", "t");
  const kafka::KafkaSinkConfig config =
      kafka::parse_kafka_sink_config(test::component(config::Kind::sink, "k", "kafka", properties));
  kafka::Destinations destinations({.own_topic = "t", .pinned_partition = static_cast<int32_t>(config.partition)},
                                   std::make_shared<kafka::KafkaSinkProbe>("k"));
  kafka::RequestBuilder builder(config, destinations);
  Take take;
  for (EventBatch& batch : batches) {
    take.events += batch.size();
    take.batches.push_back(std::move(batch));
  }
  builder.begin(take);
  for (const EventBatch& batch : take.batches) builder.add(batch);
  std::vector<std::tuple<std::string, std::string, int32_t>> made;
  for (const kafka::OutgoingMessage& m : builder.messages())
    made.emplace_back(std::string(m.payload, m.length), m.key ? std::string(m.key, m.key_length) : "<none>",
                      m.partition);
  return made;
}

const std::vector<std::string> kFirstLines = {"<13>Dec  6 19:48:11 web01 app[1]: one",
                                              "<13>Dec  6 19:48:11 web02 app: two"};
const std::vector<std::string> kSecondLines = {"<13>Dec  6 19:48:12 web03 three"};

}  // namespace

TEST_CASE("a plain take's messages are the events' bodies, in order, to the sink's partition", "[kafka][sink]") {
  CHECK(built_messages({{"key", "4"}}, {parsed_batch(kFirstLines), parsed_batch(kSecondLines)}) ==
        std::vector<std::tuple<std::string, std::string, int32_t>>{
            {"app[1]: one", "<none>", 4}, {"app: two", "<none>", 4}, {"three", "<none>", 4}});
  // format = raw: the frames as they came; no key set: the partitioner's (-1).
  CHECK(built_messages({{"format", "raw"}}, {parsed_batch(kFirstLines)}) ==
        std::vector<std::tuple<std::string, std::string, int32_t>>{{kFirstLines[0], "<none>", -1},
                                                                   {kFirstLines[1], "<none>", -1}});
}

TEST_CASE("a take whose events carry a key gets each message its key, the plain path not taken", "[kafka][sink]") {
  CHECK(built_messages({{"key", "2"}, {"keyField", "host"}}, {parsed_batch(kFirstLines), parsed_batch(kSecondLines)}) ==
        std::vector<std::tuple<std::string, std::string, int32_t>>{
            {"app[1]: one", "web01", 2}, {"app: two", "web02", 2}, {"three", "web03", 2}});
}
