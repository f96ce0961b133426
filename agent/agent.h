#pragma once
// One running agent: its channels, sinks and sources, built from an AgentConfig.
//
// Lifecycle (main thread): Agent(config) builds and validates every component without
// touching the network (that is all `--check` does) → start(): embedded Kafka, then sinks,
// then sources → stop(timeout): sources stop reading and put what they read; sinks drain the
// channels into Kafka and flush; whatever is left is counted and logged.

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/config/config_tree.h"
#include "channels/channel.h"
#include "sinks/kafka/kafka_environment.h"
#include "sinks/sink.h"
#include "sources/source.h"

namespace sluice {

struct AgentTotals {
  uint64_t events_in = 0;        // events the sources put into channels
  uint64_t events_out = 0;       // events sinks sent (handed over or acknowledged)
  uint64_t events_failed = 0;
  uint64_t channel_held = 0;
  uint64_t channel_capacity = 0;
  std::chrono::nanoseconds put_blocked{0};  // sources waiting for room, summed
  int64_t kafka_queue = 0;                  // messages waiting in the sinks' producers
};

class Agent {
 public:
  explicit Agent(const config::AgentConfig& config);
  ~Agent();

  void start();
  // Returns the number of events known lost during shutdown (0 on a clean drain).
  uint64_t stop(std::chrono::milliseconds timeout);

  // key=value lines for --ready-file: ports actually bound, the embedded bootstrap.
  std::string ready_info() const;
  AgentTotals totals() const;
  const std::vector<std::unique_ptr<Source>>& sources() const { return sources_; }
  const std::vector<std::unique_ptr<Channel>>& channels() const { return channels_; }
  const std::vector<std::unique_ptr<Sink>>& sinks() const { return sinks_; }
  size_t source_count() const { return sources_.size(); }
  size_t channel_count() const { return channels_.size(); }
  size_t sink_count() const { return sinks_.size(); }

 private:
  kafka::KafkaEnvironment kafka_;
  std::vector<std::unique_ptr<Channel>> channels_;
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::vector<std::unique_ptr<Source>> sources_;
  bool running_ = false;
};

}  // namespace sluice
