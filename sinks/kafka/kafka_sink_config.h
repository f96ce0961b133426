#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/api/event_batch.h"
#include "agent/api/property_table.h"
#include "interceptors/java_regex.h"
#include "sinks/kafka/producer.h"

namespace sluice::kafka {

enum class PayloadFormat { body, raw, json };

// kafka.headers: an event header sent as a Kafka record header, named as the user wrote it.
struct RecordHeaderField {
  HeaderRef header;
  std::string name;
};

// kafka.topic with %{header} in it (Flume's): literal parts and header names, alternating.
struct TopicTemplate {
  struct Part {
    std::string text;  // a literal, or a header's name
    HeaderRef header;  // set for a header
  };
  std::vector<Part> parts;  // empty: the topic has no %{...}
  bool empty() const { return parts.empty(); }
};

struct KafkaSinkConfig {
  std::string topic;
  std::string bootstrap;  // "embedded" for the in-process mock cluster
  int64_t partition = -1;
  size_t batch_size = 0;
  size_t takes_in_flight = 0;
  PayloadFormat format = PayloadFormat::body;
  HeaderRef key_header;        // message key (hashed by murmur2, as Java does); Flume's: the key header
  HeaderRef partition_header;  // partition number from a header
  HeaderRef topic_header;      // per-event topic (cleared unless allowTopicOverride)
  bool allow_topic_override = true;
  std::shared_ptr<const interceptors::JavaRegex> allowed_topics;  // the topics an event may name; null: any
  size_t max_topics = 1000;                                       // event-named topics kept at once
  bool create_event_topics = false;  // allow.auto.create.topics = true was set: an event's topic may be created
  TopicTemplate topic_template;      // kafka.topic's %{header}s
  bool flume_event_format = false;   // useFlumeEventFormat: Flume's Avro event (headers and body)
  std::vector<RecordHeaderField> headers;
  bool share_producer = false;
  std::chrono::milliseconds stalled_partition_timeout{};  // 0: never replace a producer for a stall
  std::chrono::milliseconds ssl_reload_interval{};        // 0: the TLS files are read once, at start
  std::string dead_letter_topic;                          // empty: records refused for good are discarded
  config::ByteSize dead_letter_max_bytes;                 // 0: a dead letter's payload whole
  ProducerSettings producer;                              // librdkafka names, mapped from kafka.* and legacy keys

  std::string acks;                // as librdkafka will see it
  bool wait_for_delivery = false;  // acks != 0 or producer.type = sync
};

extern const config::PropertyTable<KafkaSinkConfig> kKafkaSinkProperties;

// Kafka's rule for topic names (1 to 249 of a-z A-Z 0-9 . _ -, not "." or ".."): a configured
// topic that breaks it is refused at start, a per-event one is discarded without asking Kafka.
bool is_valid_topic_name(std::string_view topic);

// Binds the table, maps kafka.* (Kafka 0.8 and new-producer names) onto librdkafka's, and
// checks the result with librdkafka. Throws ConfigError naming file, line and key.
KafkaSinkConfig parse_kafka_sink_config(const config::ComponentConfig& component);

}  // namespace sluice::kafka
