#pragma once
// Where a Kafka sink's messages go, decided before they are produced: the topic (the sink's own,
// or one an event chose, if the sink allows it) and the partition (pinned, from a header, hashed
// from the key as the producer's partitioner would, or picked among the partitions being served),
// and whether that partition is served now (cluster_view.h). A message whose partition is not
// served is not produced: it waits aside (aside_takes.h) until it is.
//
// A topic named by an event is an input, not a command:
//   - allowedTopics (a regex): others go to the sink's own topic, counted;
//   - maxTopics: the event-chosen topics the sink keeps at once (least recently used let go); one
//     more, while all are in use, goes to the sink's own topic, counted;
//   - a topic the cluster does not have is not created (unless allow.auto.create.topics = true is
//     set); its events are discarded, counted as unknown_topic, without holding up the others.
//
// Owned and used by the sink's thread; the producer it asks is replaced with attach().

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "agent/api/deadline.h"
#include "sinks/kafka/cluster_view.h"

namespace sluice::interceptors {
class JavaRegex;
}

namespace sluice::kafka {

class Producer;
class KafkaSinkProbe;

struct DestinationSettings {
  std::string own_topic;          // empty when the topic is a %{header} template (every event names its own)
  int32_t pinned_partition = -1;  // key (defaultPartitionId), unless a header chooses per event
  const interceptors::JavaRegex* allowed_topics = nullptr;  // nullptr: any name
  size_t max_topics = 1000;
  bool create_event_topics = false;  // allow.auto.create.topics = true was set
};

// What becomes of a message.
enum class Fate : uint8_t {
  produce,  // its partition is served: produced now
  aside,    // its topic or partition is not served yet: waits aside
  refuse,   // the cluster refuses its topic, or the topic or partition does not exist (`refusal`)
};

class Destinations {
 public:
  Destinations(DestinationSettings settings, std::shared_ptr<KafkaSinkProbe> probe);
  ~Destinations();
  // Whether events of `topic` still wait aside: such a topic is not let go for a new one.
  void set_busy(std::function<bool(const std::string&)> busy) { busy_ = std::move(busy); }

  // The producer asked from now on (at start and with each new producer): the topics in use are
  // taken up with it.
  void attach(std::shared_ptr<Producer> producer);
  // Lets go of the topics in use (the sink stops).
  void detach();

  // The topic an event that names `chosen` goes to: `chosen` itself if the sink allows it, else
  // the sink's own topic (nullopt), counted. Called once per event that names a topic.
  std::optional<std::string> topic_for_event(std::string_view chosen);

  // What the cluster view says of `topic` (cached for the take: forget_take() clears it).
  const TopicView& view(const std::string& topic);
  void forget_take();

  // Where a message to `topic` (whose view() is `view`) goes: its partition (`explicit_partition`
  // if >= 0, else hashed from `key`, else one picked for the take) and its fate; `refusal` set for
  // refuse.
  struct Decision {
    int32_t partition = -1;
    Fate fate = Fate::aside;
    int refusal = 0;  // librdkafka's error code for refuse
  };
  Decision decide(const std::string& topic, const TopicView& view, int32_t explicit_partition, std::string_view key,
                  bool has_key);

  // Whether the sink's own destination is served (its pinned partition, or some partition of its
  // topic); `problem` says why not. True for a sink without an own topic.
  bool own_served(std::string* problem);
  // Whether aside events of `topic` (partition -1: not chosen yet) may go now, must wait, or
  // will never go (refused: their topic is missing or refused; `refusal` set).
  Fate fate_of_aside(const std::string& topic, int32_t partition, int* refusal);

  size_t topics_in_use() const { return lru_.size(); }

 private:
  void use(const std::string& topic);  // most recently used; takes its handle up if new
  bool make_room();                    // lets go of the least recently used topic, if one is idle

  const DestinationSettings settings_;
  const std::shared_ptr<KafkaSinkProbe> probe_;
  std::function<bool(const std::string&)> busy_;
  std::shared_ptr<Producer> producer_;
  std::list<std::string> lru_;  // event-chosen topics in use, most recent first
  std::unordered_map<std::string, std::list<std::string>::iterator> in_use_;
  std::map<std::string, TopicView, std::less<>> take_views_;  // this take's answers
  std::unordered_set<std::string> take_topics_;               // the topics this take's events chose
  std::map<std::string, int32_t, std::less<>> picked_;        // a take's partition per topic, without key
  std::map<std::string, uint32_t, std::less<>> rotation_;     // the next take's pick per topic
};

}  // namespace sluice::kafka
