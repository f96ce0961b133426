#include "sinks/kafka/request_builder.h"

#include <charconv>
#include <span>
#include <stdexcept>

#include "agent/api/event_json.h"
#include "sinks/kafka/flume_event.h"

namespace sluice::kafka {

void RequestBuilder::begin(const Take& take) {
  messages_.clear();
  key_scratch_.clear();
  topics_.clear();
  headers_.clear();
  headers_.reserve(take.events * config_.headers.size());
  key_scratch_.reserve(take.events * (!config_.key_header.empty() + config_.headers.size()));
  encoded_.reset();
  if (!encodes()) return;
  // One buffer per take, held by its tracker until librdkafka is done with it: sized for the
  // common event at once, so that it rarely grows (growing copies what it holds).
  encoded_ = std::make_unique<std::string>();
  const uint64_t per_byte = config_.format == PayloadFormat::json ? 2 : 1;
  encoded_->reserve(take.bytes * per_byte + take.events * (config_.flume_event_format ? 384 : 256));
}

void RequestBuilder::add(const EventBatch& batch) {
  prepare_lookups(batch);
  if (lookups_.plain) {  // nothing to look up per event
    const auto partition = static_cast<int32_t>(config_.partition);
    for (const EventRecord& e : batch) {
      const std::string_view payload = own_bytes(batch, e);
      messages_.push_back({.payload = payload.data(), .length = payload.size(), .partition = partition});
    }
    return;
  }
  for (const EventRecord& e : batch) add_message(batch, e);
}

void RequestBuilder::prepare_lookups(const EventBatch& batch) {
  lookups_ = {.key = !config_.key_header.empty() && batch.may_have(config_.key_header),
              .partition = batch.may_have(config_.partition_header),
              .topic = !config_.topic_header.empty() && batch.may_have(config_.topic_header)};
  // Each message only its event's own bytes, to the sink's partition (the seed's shape).
  lookups_.plain = !encodes() && !lookups_.key && config_.headers.empty() && config_.partition_header.empty() &&
                   !lookups_.topic && config_.topic_template.empty();
}

void RequestBuilder::add_message(const EventBatch& batch, const EventRecord& e) {
  OutgoingMessage& m = messages_.emplace_back();
  set_payload(batch, e, m);
  if (lookups_.key) {
    // librdkafka copies keys, but only at produce(): numeric keys need a home until then.
    char* scratch = key_scratch_.emplace_back().data();
    const std::optional<std::string_view> key = batch.header(e, config_.key_header, scratch);
    if (key && !key->empty()) {  // none: no key, the sink picks the partition
      m.key = key->data();
      m.key_length = key->size();
    }
  }
  if (!config_.headers.empty()) {
    // Views into headers_, which begin() reserved for the whole take: it does not move.
    const size_t first = headers_.size();
    for (const RecordHeaderField& h : config_.headers) {
      const std::optional<std::string_view> value = batch.header(e, h.header, key_scratch_.emplace_back().data());
      if (value && !value->empty()) headers_.push_back({h.name, *value});
    }
    m.headers = std::span<const MessageHeader>(headers_.data() + first, headers_.size() - first);
  }
  set_partition(batch, e, m);
  if (lookups_.topic || !config_.topic_template.empty()) set_topic(batch, e);
}

std::string_view RequestBuilder::own_bytes(const EventBatch& batch, const EventRecord& e) const {
  return config_.format == PayloadFormat::raw ? batch.raw(e) : batch.body(e);
}

// The event's own bytes, in place; or its encoding, written once into the take's buffer (as an
// offset: the buffer may still move as it grows; release_encoded() makes it a pointer).
void RequestBuilder::set_payload(const EventBatch& batch, const EventRecord& e, OutgoingMessage& m) {
  if (!encodes()) {
    const std::string_view payload = own_bytes(batch, e);
    m.payload = payload.data();
    m.length = payload.size();
    return;
  }
  std::string& out = *encoded_;
  const size_t start = out.size();
  if (!config_.flume_event_format) {
    append_event_json(batch, e, out);
  } else if (config_.format == PayloadFormat::json) {
    // Avro writes the body's length first: the JSON is made aside, then written after it.
    scratch_.clear();
    append_event_json(batch, e, scratch_);
    append_flume_event(batch.all_headers(e), scratch_, out);
  } else {
    append_flume_event(batch.all_headers(e), own_bytes(batch, e), out);
  }
  m.payload = reinterpret_cast<const char*>(start);
  m.length = out.size() - start;
}

// The partition, when the sink's settings or the event choose it (-1: its key, or the sink, will).
void RequestBuilder::set_partition(const EventBatch& batch, const EventRecord& e, OutgoingMessage& m) {
  m.partition = static_cast<int32_t>(config_.partition);
  if (config_.partition_header.empty()) return;
  // Without a usable header: defaultPartitionId (key), or the partitioner.
  char scratch[24];
  const std::optional<std::string_view> value =
      lookups_.partition ? batch.header(e, config_.partition_header, scratch) : std::nullopt;
  int32_t partition = -1;
  const char* end = value ? value->data() + value->size() : nullptr;
  if (value && std::from_chars(value->data(), end, partition) == std::from_chars_result{end, std::errc()} &&
      partition >= 0)
    m.partition = partition;
  else
    ++partition_header_unusable_;
}

void RequestBuilder::set_topic(const EventBatch& batch, const EventRecord& e) {
  // topics_ stays empty while no event has a topic of its own (one produce call for the take);
  // the first that has one gives every message before it the sink's topic ("").
  std::optional<std::string> topic;  // nullopt: the sink's topic
  char scratch[24];
  if (const auto chosen = lookups_.topic ? batch.header(e, config_.topic_header, scratch) : std::nullopt) {
    topic = std::string(*chosen);  // even empty: the event's own, which Kafka refuses (discarded, counted)
  } else if (!config_.topic_template.empty()) {
    topic.emplace();
    // Flume's %{header}: a header the event lacks is an empty string (counted).
    for (const TopicTemplate::Part& part : config_.topic_template.parts) {
      if (part.header.empty()) {
        *topic += part.text;
      } else if (const auto value = batch.header(e, part.header, scratch)) {
        *topic += *value;
      } else {
        ++topic_header_missing_;
      }
    }
  }
  // A name Kafka would refuse stays the event's (discarded as invalid_topic, without asking);
  // another is the event's if the sink allows it, else the sink's own topic (counted).
  if (topic && is_valid_topic_name(*topic)) {
    topic = destinations_.topic_for_event(*topic);
    if (!topic && !config_.topic_template.empty()) topic.emplace();  // no own topic to go to: discarded
  }
  if (topic || !topics_.empty()) {
    topics_.resize(messages_.size() - 1);
    topics_.push_back(std::move(topic));
  }
}

void RequestBuilder::keep(const std::vector<bool>& stays) {
  size_t kept = 0;
  for (size_t i = 0; i < messages_.size(); ++i) {
    if (!stays[i]) continue;
    messages_[kept] = messages_[i];
    if (!topics_.empty()) topics_[kept] = i < topics_.size() ? std::move(topics_[i]) : std::nullopt;
    ++kept;
  }
  messages_.resize(kept);
  if (!topics_.empty()) topics_.resize(kept);
}

std::unique_ptr<std::string> RequestBuilder::release_encoded() {
  if (!encoded_) return nullptr;
  for (OutgoingMessage& m : messages_) m.payload = encoded_->data() + reinterpret_cast<size_t>(m.payload);
  return std::move(encoded_);
}

size_t RequestBuilder::produce(Producer& producer, const StopDeadline& until) {
  // The payloads are offsets until release_encoded(): handed to librdkafka as they are, its
  // threads would read through them. Checked in every build, never left to an assert.
  if (encoded_) throw std::logic_error("RequestBuilder::produce() before release_encoded()");
  topics_.resize(topics_.empty() ? 0 : messages_.size());  // after the last with a topic of its own: the sink's
  const std::span<OutgoingMessage> all(messages_);
  size_t start = 0, refused = 0;
  bool one_partition = true;  // every message of the run so far to the partition of its first
  for (size_t i = 1; i <= messages_.size(); ++i) {
    if (i < messages_.size() && (messages_[i].refusal != 0) == (messages_[start].refusal != 0) &&
        (topics_.empty() || topics_[i] == topics_[start])) {
      one_partition &= messages_[i].partition == messages_[start].partition;
      continue;
    }
    const std::span<OutgoingMessage> run = all.subspan(start, i - start);
    if (run.front().refusal) {
      refused += run.size();
    } else {
      const std::string& topic = topic_at(start);
      const ProduceOptions options{.copy_payloads = false,  // the events' bytes, or the take's encoded buffer
                                   .with_headers = !config_.headers.empty(),
                                   .partition_count = destinations_.view(topic).partition_count()};
      refused +=
          producer.produce(topic, one_partition ? run.front().partition : Producer::kPerMessage, run, until, options);
    }
    start = i;
    one_partition = true;
  }
  return refused;
}

}  // namespace sluice::kafka
