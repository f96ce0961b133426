#pragma once
// The embedded Kafka: librdkafka's mock cluster (real Kafka protocol on loopback ports,
// served from one internal thread), with fault injection. Used by `brokerList = embedded`
// inside the agent and by the standalone sluice-kafka-mock.
//
// Note (librdkafka 2.0.2): each partition log keeps only its newest ~5 MiB; offsets still
// count every message, so verify big runs while they go on or count by offsets.

#include <cstddef>
#include <cstdint>
#include <string>

struct rd_kafka_s;
struct rd_kafka_mock_cluster_s;

namespace sluice::kafka {

class MockCluster {
 public:
  explicit MockCluster(int brokers = 1);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  // Creates the topic, or fails if it exists with fewer partitions. Throws std::runtime_error.
  void create_topic(const std::string& topic, int partitions);
  const std::string& bootstrap_servers() const { return bootstrap_; }

  // Fault injection: broker ids are 1..brokers(); 0 means every broker.
  void set_broker_down(int32_t broker, bool down);
  void set_broker_rtt(int32_t broker, int rtt_ms);
  // Left out of the brokers Metadata answers list, while it goes on answering: as Kafka leaves out
  // a fenced broker (a single node restarting lists none). Patch 0005 of .ci/librdkafka-patches.
  void set_broker_unlisted(int32_t broker, bool unlisted);
  // The next `count` requests of Kafka API `api_key` (0 = Produce) fail with `error_code`.
  void push_request_errors(int16_t api_key, int count, int error_code);
  // The partition's leader from now on: a broker id, or -1 for none (its broker stays up).
  void set_partition_leader(const std::string& topic, int32_t partition, int32_t broker);
  // Metadata answers `error_code` for the topic from now on (0 clears it).
  void set_topic_error(const std::string& topic, int error_code);

  // Counts the requests the brokers receive from now on, to requests_received() (tests: the
  // record grows with every request, so not for a long-lived cluster under load).
  void start_counting_requests();
  // Requests of Kafka API `api_key` (0 = Produce) received since start_counting_requests().
  size_t requests_received(int16_t api_key) const;

  // Applies one control command; returns "" or what was wrong with it. Commands:
  //   down [BROKER] | up [BROKER] | rtt MS [BROKER] | errors API COUNT ERROR
  // API is a number or produce/fetch/metadata; ERROR a number or a Kafka error name
  // (NOT_LEADER_FOR_PARTITION, REQUEST_TIMED_OUT, LEADER_NOT_AVAILABLE, NOT_ENOUGH_REPLICAS).
  std::string apply_command(const std::string& command);

 private:
  rd_kafka_s* handle_ = nullptr;
  rd_kafka_mock_cluster_s* cluster_ = nullptr;
  std::string bootstrap_;
  int brokers_;
};

}  // namespace sluice::kafka
