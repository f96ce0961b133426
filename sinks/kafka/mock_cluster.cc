#include "sinks/kafka/mock_cluster.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <stdexcept>

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
    if (down) rd_kafka_mock_broker_set_down(cluster_, id);
    else rd_kafka_mock_broker_set_up(cluster_, id);
  }
}

void MockCluster::set_broker_rtt(int32_t broker, int rtt_ms) {
  for (int32_t id = broker ? broker : 1; id <= (broker ? broker : brokers_); ++id)
    rd_kafka_mock_broker_set_rtt(cluster_, id, rtt_ms);
}

}  // namespace sluice::kafka
