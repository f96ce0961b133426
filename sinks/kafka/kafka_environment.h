#pragma once
// What the Kafka sinks of one agent share: the embedded cluster (when a sink says
// `brokerList = embedded`) and producer handles (sinks with identical settings that allow it
// share one: fewer connections and librdkafka threads).
//
// Lifecycle, on the agent's main thread: sinks declare needs while they are built
// (require_topic) → start() creates the embedded cluster and its topics → sinks start and ask
// for producers → the agent destroys the environment after every sink has stopped.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "sinks/kafka/mock_cluster.h"
#include "sinks/kafka/producer.h"

namespace sluice::kafka {

inline constexpr std::string_view kEmbedded = "embedded";

class KafkaEnvironment {
 public:
  // A sink will produce to `topic` on `bootstrap` needing at least `partitions` partitions.
  void require_topic(const std::string& bootstrap, const std::string& topic, int partitions);
  void start();

  // "embedded" → the embedded cluster's address; anything else unchanged.
  std::string resolve_bootstrap(const std::string& bootstrap) const;
  // A producer for these settings: when `shared`, the one already made for identical settings
  // unless it needs replacing (a fatal error, a stalled partition). Any thread (sinks replace
  // producers from theirs). Throws ConfigError if librdkafka cannot create one.
  std::shared_ptr<Producer> producer(const ProducerSettings& settings, bool shared,
                                     std::chrono::milliseconds stall_limit);

  MockCluster* embedded() const { return embedded_.get(); }

  // The agent stops by `deadline`: the shared producers' cluster views, and those of shared
  // producers made from now on (a stalled one replaced while draining), ask nothing past it. A
  // sink's own producer is told by its sink; a shared one only here, since a reload's other sinks
  // go on using it.
  void finish_asking_by(Clock::time_point deadline);

 private:
  std::map<std::string, int> embedded_topics_;  // topic → partitions
  std::unique_ptr<MockCluster> embedded_;
  std::mutex mutex_;  // guards producers_
  std::map<std::string, std::weak_ptr<Producer>> producers_;
  Clock::time_point finish_asking_by_ = Clock::time_point::max();  // guarded by mutex_
};

}  // namespace sluice::kafka
