#pragma once
// A take's events made Kafka messages (Vector's request builder): each message's payload (the
// event's own bytes, or its JSON or Flume Avro encoding), key, record headers, partition and
// topic, as the sink's settings say. Raw and body payloads point into the take's batches; an
// encoded payload is written once into the take's encoded buffer, which the take's tracker holds
// until librdkafka's last report: librdkafka reads it in place, copying nothing.

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/api/channel.h"
#include "sinks/kafka/delivery_outcome.h"
#include "sinks/kafka/destinations.h"
#include "sinks/kafka/kafka_sink_config.h"
#include "sinks/kafka/producer.h"

namespace sluice::kafka {

class RequestBuilder {
 public:
  RequestBuilder(const KafkaSinkConfig& config, Destinations& destinations)
      : config_(config), destinations_(destinations) {}

  // A new request, for `take`; then add() its batches.
  void begin(const Take& take);
  void add(const EventBatch& batch);
  // The take's messages, in order, and their topics (empty: every one the sink's own topic; a
  // message's nullopt: the sink's own).
  std::vector<OutgoingMessage>& messages() { return messages_; }
  std::vector<std::optional<std::string>>& topics() { return topics_; }
  const std::string& topic_at(size_t i) const { return i < topics_.size() && topics_[i] ? *topics_[i] : config_.topic; }
  Destination destination_of(size_t index) const {
    return {.topic_from_event = index < topics_.size() && topics_[index].has_value(),
            .partition_from_event = !config_.partition_header.empty()};
  }
  // Only the messages whose `stays[i]` remain, in order (the others went aside).
  void keep(const std::vector<bool>& stays);
  // What this request's events lacked: %{header}s of topic templates, usable partitionIdHeaders.
  uint64_t take_topic_headers_missing() { return std::exchange(topic_header_missing_, 0); }
  uint64_t take_partition_headers_unusable() { return std::exchange(partition_header_unusable_, 0); }
  // The encoded payloads' buffer, for the take's tracker to hold until librdkafka has reported on
  // every message (null when the payloads are the events' own bytes); their pointers are set.
  // Before produce().
  std::unique_ptr<std::string> release_encoded();
  // Into `producer`: one call per run of messages bound for the same topic, refused or not (routing
  // refused some already); returns how many librdkafka did not take (their `refusal` says why).
  size_t produce(Producer& producer, const StopDeadline& until);

 private:
  bool encodes() const { return config_.format == PayloadFormat::json || config_.flume_event_format; }
  void prepare_lookups(const EventBatch& batch);
  // The event's bytes as the message carries them unencoded: the frame (format = raw) or its body.
  std::string_view own_bytes(const EventBatch& batch, const EventRecord& e) const;
  void add_message(const EventBatch& batch, const EventRecord& e);
  void set_payload(const EventBatch& batch, const EventRecord& e, OutgoingMessage& m);
  void set_partition(const EventBatch& batch, const EventRecord& e, OutgoingMessage& m);
  void set_topic(const EventBatch& batch, const EventRecord& e);

  const KafkaSinkConfig& config_;
  Destinations& destinations_;
  std::vector<OutgoingMessage> messages_;           // reused for every take
  std::unique_ptr<std::string> encoded_;            // this take's JSON or Flume events (offsets until released)
  std::string scratch_;                             // JSON inside a Flume event, before its length is known
  std::vector<std::array<char, 24>> key_scratch_;   // numeric keys and header values, formatted
  std::vector<MessageHeader> headers_;              // kafka.headers of every message, in order
  std::vector<std::optional<std::string>> topics_;  // per-event topics (topicHeader, %{header}); none: topic
  struct {
    bool key = false, partition = false, topic = false;
    bool plain = false;                     // none of these, nor record headers or encoding: no lookup per event
  } lookups_;                               // for the batch being added (prepare_lookups)
  uint64_t topic_header_missing_ = 0;       // %{header}s an event lacked, in this take
  uint64_t partition_header_unusable_ = 0;  // partitionIdHeader absent or not a partition
};

}  // namespace sluice::kafka
