#include "sinks/kafka/mock_cluster.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <sstream>
#include <stdexcept>
#include <vector>

namespace sluice::kafka {

MockCluster::MockCluster(int brokers) : brokers_(brokers) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // The cluster needs a handle to live in; this one never produces.
  rd_kafka_conf_set(conf, "log_level", "3", error, sizeof error);
  handle_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (!handle_) throw std::runtime_error(std::string("embedded kafka: ") + error);
  cluster_ = rd_kafka_mock_cluster_new(handle_, brokers);
  if (!cluster_) {
    rd_kafka_destroy(handle_);
    throw std::runtime_error("embedded kafka: cannot create the mock cluster");
  }
  bootstrap_ = rd_kafka_mock_cluster_bootstraps(cluster_);
}

MockCluster::~MockCluster() {
  rd_kafka_mock_cluster_destroy(cluster_);
  rd_kafka_destroy(handle_);
}

void MockCluster::create_topic(const std::string& topic, int partitions) {
  const rd_kafka_resp_err_t err =
      rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, std::min(brokers_, 3));
  if (err) throw std::runtime_error("embedded kafka: cannot create topic " + topic + ": " + rd_kafka_err2str(err));
}

void MockCluster::set_broker_down(int32_t broker, bool down) {
  for (int32_t id = broker ? broker : 1; id <= (broker ? broker : brokers_); ++id) {
    if (down)
      rd_kafka_mock_broker_set_down(cluster_, id);
    else
      rd_kafka_mock_broker_set_up(cluster_, id);
  }
}

void MockCluster::set_broker_rtt(int32_t broker, int rtt_ms) {
  for (int32_t id = broker ? broker : 1; id <= (broker ? broker : brokers_); ++id)
    rd_kafka_mock_broker_set_rtt(cluster_, id, rtt_ms);
}

void MockCluster::set_broker_unlisted(int32_t broker, bool unlisted) {
#ifdef SLUICE_RDKAFKA_PINNED  // patch 0005: the pinned librdkafka's mock only
  for (int32_t id = broker ? broker : 1; id <= (broker ? broker : brokers_); ++id)
    rd_kafka_mock_broker_set_unlisted(cluster_, id, unlisted ? 1 : 0);
#else
  (void)broker;
  (void)unlisted;
  throw std::runtime_error("an unlisted mock broker needs the pinned librdkafka (.ci/librdkafka-patches/0005)");
#endif
}

}  // namespace sluice::kafka

namespace sluice::kafka {

void MockCluster::push_request_errors(int16_t api_key, int count, int error_code) {
  // The variadic rd_kafka_mock_push_request_errors wants `count` error arguments; the array
  // form takes the same error repeated.
  const std::vector<rd_kafka_resp_err_t> errors(static_cast<size_t>(count),
                                                static_cast<rd_kafka_resp_err_t>(error_code));
  rd_kafka_mock_push_request_errors_array(cluster_, api_key, errors.size(), errors.data());
}

void MockCluster::set_topic_error(const std::string& topic, int error_code) {
  rd_kafka_mock_topic_set_error(cluster_, topic.c_str(), static_cast<rd_kafka_resp_err_t>(error_code));
}

void MockCluster::set_partition_leader(const std::string& topic, int32_t partition, int32_t broker) {
  if (rd_kafka_mock_partition_set_leader(cluster_, topic.c_str(), partition, broker))
    throw std::runtime_error("embedded kafka: cannot set the leader of " + topic + " [" + std::to_string(partition) +
                             "] to " + std::to_string(broker));
}

void MockCluster::start_counting_requests() { rd_kafka_mock_start_request_tracking(cluster_); }

size_t MockCluster::requests_received(int16_t api_key) const {
  size_t count = 0, matching = 0;
  rd_kafka_mock_request_t** requests = rd_kafka_mock_get_requests(cluster_, &count);
  for (size_t i = 0; i < count; ++i)
    if (rd_kafka_mock_request_api_key(requests[i]) == api_key) ++matching;
  rd_kafka_mock_request_destroy_array(requests, count);
  return matching;
}

std::string MockCluster::apply_command(const std::string& command) {
  std::istringstream words(command);
  std::string verb;
  words >> verb;
  auto broker_arg = [&]() {
    int32_t broker = 0;
    words >> broker;
    return broker;
  };
  if (verb == "down" || verb == "up") {
    set_broker_down(broker_arg(), verb == "down");
    return "";
  }
  if (verb == "rtt") {
    int rtt = -1;
    words >> rtt;
    if (rtt < 0) return "rtt needs milliseconds";
    set_broker_rtt(broker_arg(), rtt);
    return "";
  }
  if (verb == "errors") {
    std::string api, error;
    int count = 0;
    words >> api >> count >> error;
    static const std::pair<const char*, int> kApis[] = {{"produce", 0}, {"fetch", 1}, {"metadata", 3}};
    static const std::pair<const char*, int> kErrors[] = {{"LEADER_NOT_AVAILABLE", 5},
                                                          {"NOT_LEADER_FOR_PARTITION", 6},
                                                          {"REQUEST_TIMED_OUT", 7},
                                                          {"NOT_ENOUGH_REPLICAS", 19}};
    auto lookup = [](const std::string& text, const auto& table) {
      for (const auto& [name, value] : table)
        if (text == name) return value;
      try {
        return std::stoi(text);
      } catch (...) {
        return -1;
      }
    };
    const int api_key = lookup(api, kApis), code = lookup(error, kErrors);
    if (api_key < 0 || code < 0 || count <= 0) return "usage: errors API COUNT ERROR";
    push_request_errors(static_cast<int16_t>(api_key), count, code);
    return "";
  }
  return "unknown command \"" + verb + "\" (down, up, rtt, errors)";
}

}  // namespace sluice::kafka
