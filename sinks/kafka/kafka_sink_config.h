#pragma once
#include <cstdint>
#include <string>

#include "agent/config/property_table.h"
#include "sinks/kafka/producer.h"

namespace sluice::kafka {

enum class PayloadFormat { body, raw };

struct KafkaSinkConfig {
  std::string topic;
  std::string bootstrap;  // "embedded" for the in-process mock cluster
  int64_t partition = -1;
  int64_t batch_size = 0;
  std::string format_name;
  ProducerSettings producer;  // librdkafka names, mapped from kafka.* and legacy keys

  PayloadFormat format = PayloadFormat::body;
  std::string acks;                // as librdkafka will see it
  bool wait_for_delivery = false;  // acks != 0 or producer.type = sync
};

extern const config::PropertyTable<KafkaSinkConfig> kKafkaSinkProperties;

// Binds the table, maps kafka.* (Kafka 0.8 and new-producer names) onto librdkafka's, and
// checks the result with librdkafka. Throws ConfigError naming file, line and key.
KafkaSinkConfig parse_kafka_sink_config(const config::ComponentConfig& component);

}  // namespace sluice::kafka
