// The embedded Kafka behaves as Kafka where the agent's tests rely on it.

#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "sinks/kafka/mock_cluster.h"
#include "sinks/kafka/producer.h"
#include "sinks/kafka/topic_reader.h"
#include "tests/support/eventually.h"

using namespace sluice;
using namespace sluice::kafka;
using namespace std::chrono_literals;
using sluice::test::eventually;

namespace {

struct Delivered final : DeliveryTracker {
  std::atomic<int> count{0}, failed{0};
  void on_delivery(const DeliveryReport& report) override { ++(report.error == DeliveryError::none ? count : failed); }
};

}  // namespace

// librdkafka's mock checks sequences only for transactional producers; Sluice's patch
// (.ci/librdkafka-patches/0003) makes it drop an idempotent producer's resends too. Without it a
// test that cuts the broker's connections under load sees duplicates a real Kafka never stores.
TEST_CASE("the embedded Kafka stores a batch an idempotent producer sends again once, as Kafka does", "[kafka][mock]") {
  MockCluster cluster;
  cluster.create_topic("t", 1);
  ProducerSettings settings;
  settings["bootstrap.servers"] = {cluster.bootstrap_servers(), {}, "brokerList"};
  for (const auto& [name, value] :
       std::map<std::string, std::string>{{"acks", "all"}, {"enable.idempotence", "true"}, {"retry.backoff.ms", "50"}})
    settings[name] = {value, {"test", 1}, "a.sinks.k.kafka." + name};
  Producer producer(settings);
  Delivered delivered;
  StopDeadline never;
  std::vector<std::string> payloads;
  for (int i = 0; i < 11; ++i) payloads.push_back("event " + std::to_string(i));
  auto produce = [&](size_t from, size_t to) {
    std::vector<OutgoingMessage> batch;
    for (size_t i = from; i < to; ++i)
      batch.push_back({.payload = payloads[i].data(), .length = payloads[i].size(), .tracker = &delivered});
    REQUIRE(producer.produce("t", 0, batch, never) == 0);
  };
  auto delivered_all = [&](int n) {
    return eventually(
        [&] {
          producer.poll(50);
          return delivered.count + delivered.failed >= n;
        },
        30s);
  };
  produce(0, 1);  // the producer id and the connection, before the fault
  REQUIRE(delivered_all(1));

  // The fault, as an outage makes it: the broker stores the batch, and its connection closes
  // before the answer goes out. The producer sends the same batch (the same sequence numbers)
  // again once the broker is back.
  cluster.start_counting_requests();
  cluster.set_broker_rtt(1, 3000);  // the answer waits
  produce(1, 11);
  // The broker's one thread stores a request's batch as it reads it, before it takes the next
  // command: once the request is counted, "down" comes after the batch is stored.
  REQUIRE(eventually([&] { return cluster.requests_received(0) >= 1; }, 20s));
  cluster.set_broker_down(1, true);
  cluster.set_broker_rtt(1, 0);
  cluster.set_broker_down(1, false);
  REQUIRE(delivered_all(11));
  CHECK(delivered.failed == 0);
  CHECK(cluster.requests_received(0) >= 2);  // the batch was sent again

  std::vector<std::string> stored;
  ReadOptions options;
  options.idle = 300ms;
  options.timeout = 20s;
  TopicReader(cluster.bootstrap_servers(), "t")
      .read_all([&](int32_t, int64_t, int64_t, std::string_view payload) { stored.emplace_back(payload); }, options);
  CHECK(stored == payloads);
}
