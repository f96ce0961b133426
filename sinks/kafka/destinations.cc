#include "sinks/kafka/destinations.h"

#include <algorithm>

#include "interceptors/java_regex.h"
#include "sinks/kafka/delivery_outcome.h"
#include "sinks/kafka/kafka_sink_probe.h"
#include "sinks/kafka/producer.h"

namespace sluice::kafka {

Destinations::Destinations(DestinationSettings settings, std::shared_ptr<KafkaSinkProbe> probe)
    : settings_(std::move(settings)), probe_(std::move(probe)) {}

Destinations::~Destinations() { detach(); }

void Destinations::attach(std::shared_ptr<Producer> producer) {
  detach();
  producer_ = std::move(producer);
  // The sink's own topic gets its handle at once: librdkafka asks for its metadata (and has Kafka
  // create it, if the cluster and allow.auto.create.topics let it). An event's topic gets one only
  // once the cluster has it (Producer::produce makes it then), unless the sink may create it.
  if (!settings_.own_topic.empty()) producer_->use_topic(settings_.own_topic, true);
  for (const std::string& topic : lru_) producer_->use_topic(topic, settings_.create_event_topics);
  take_views_.clear();
}

void Destinations::detach() {
  if (!producer_) return;
  if (!settings_.own_topic.empty()) producer_->release_topic(settings_.own_topic);
  for (const std::string& topic : lru_) producer_->release_topic(topic);
  producer_.reset();
}

std::optional<std::string> Destinations::topic_for_event(std::string_view chosen) {
  if (chosen == settings_.own_topic) return std::nullopt;
  std::string topic(chosen);
  if (settings_.allowed_topics && !settings_.allowed_topics->matches(topic)) {
    probe_->retopicked(Retopicked::not_allowed);
    return std::nullopt;
  }
  if (const auto it = in_use_.find(topic); it != in_use_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);  // the most recently used
  } else {
    if (lru_.size() >= settings_.max_topics && !make_room()) {
      probe_->retopicked(Retopicked::max_topics);
      return std::nullopt;
    }
    use(topic);
  }
  take_topics_.insert(topic);
  return topic;
}

void Destinations::use(const std::string& topic) {
  lru_.push_front(topic);
  in_use_[topic] = lru_.begin();
  if (producer_) producer_->use_topic(topic, settings_.create_event_topics);
}

// The least recently used topic that is idle goes: not one this take chose, nor one whose events
// wait aside.
bool Destinations::make_room() {
  for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) {
    const std::string& topic = *it;
    if (take_topics_.count(topic) || (busy_ && busy_(topic))) continue;
    if (producer_) producer_->release_topic(topic);
    in_use_.erase(topic);
    rotation_.erase(topic);
    lru_.erase(std::next(it).base());
    return true;
  }
  return false;
}

const TopicView& Destinations::view(const std::string& topic) {
  const auto it = take_views_.find(topic);
  if (it != take_views_.end()) return it->second;
  return take_views_.emplace(topic, producer_->topic_view(topic)).first->second;
}

void Destinations::forget_take() {
  take_views_.clear();
  take_topics_.clear();
  for (const auto& [topic, partition] : picked_) ++rotation_[topic];  // the next take picks the next one
  picked_.clear();
}

Destinations::Decision Destinations::decide(const std::string& topic, const TopicView& v, int32_t explicit_partition,
                                            std::string_view key, bool has_key) {
  const bool own = topic == settings_.own_topic;
  switch (v.known) {
    case TopicView::Known::not_yet: return {explicit_partition, Fate::aside, 0};
    case TopicView::Known::refused: return {explicit_partition, Fate::refuse, v.error};
    case TopicView::Known::missing:
      // The sink's own topic waits for it (a misconfiguration, logged; or being created); an
      // event's waits only if the sink may create it.
      if (own || settings_.create_event_topics) return {explicit_partition, Fate::aside, 0};
      return {explicit_partition, Fate::refuse, kErrUnknownTopicOrPart};
    case TopicView::Known::exists: break;
  }
  const int32_t count = v.partition_count();
  int32_t partition = explicit_partition >= 0 ? explicit_partition : -1;
  if (partition < 0 && has_key) partition = producer_->partition_for_key(key, count);
  if (partition < 0) {
    // No key decides (or a partitioner that picks at random): one served partition per take and
    // topic, the next one each take (as librdkafka's sticky partitioner does per linger).
    auto [pick, added] = picked_.try_emplace(topic, -1);
    if (added && count > 0) {
      const uint32_t start = rotation_[topic];
      for (int32_t i = 0; i < count; ++i) {
        const auto p = static_cast<int32_t>((start + static_cast<uint32_t>(i)) % static_cast<uint32_t>(count));
        if (v.served(p)) {
          pick->second = p;
          break;
        }
      }
    }
    partition = pick->second;
    if (partition < 0) return {-1, Fate::aside, 0};  // none served now
  }
  if (partition >= count) return {partition, Fate::refuse, kErrUnknownPartition};
  return {partition, v.served(partition) ? Fate::produce : Fate::aside, 0};
}

bool Destinations::own_served(std::string* problem) {
  if (settings_.own_topic.empty()) return true;
  const TopicView& v = view(settings_.own_topic);
  if (v.known == TopicView::Known::exists) {
    if (settings_.pinned_partition >= v.partition_count()) {
      if (problem)
        *problem = "topic " + settings_.own_topic + " has no partition " + std::to_string(settings_.pinned_partition) +
                   " (it has " + std::to_string(v.partition_count()) + ")";
      return false;
    }
    if (settings_.pinned_partition >= 0
            ? v.served(settings_.pinned_partition)
            : std::any_of(v.partitions.begin(), v.partitions.end(), [](const PartitionView& p) { return p.served; }))
      return true;
  }
  if (problem) *problem = v.problem.empty() ? "the cluster has not answered for it yet" : v.problem;
  return false;
}

Fate Destinations::fate_of_aside(const std::string& topic, int32_t partition, int* refusal) {
  const TopicView& v = view(topic);
  switch (v.known) {
    case TopicView::Known::not_yet: return Fate::aside;
    case TopicView::Known::refused: *refusal = v.error; return Fate::refuse;
    case TopicView::Known::missing:
      if (topic == settings_.own_topic || settings_.create_event_topics) return Fate::aside;
      *refusal = kErrUnknownTopicOrPart;
      return Fate::refuse;
    case TopicView::Known::exists: break;
  }
  if (partition < 0)  // any served partition will do: decide() picks it again when they are sent
    return std::any_of(v.partitions.begin(), v.partitions.end(), [](const PartitionView& p) { return p.served; })
               ? Fate::produce
               : Fate::aside;
  // A partition the topic turned out not to have goes too: decide() refuses it (counted).
  return partition >= v.partition_count() || v.served(partition) ? Fate::produce : Fate::aside;
}

}  // namespace sluice::kafka
