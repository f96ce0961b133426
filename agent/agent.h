#pragma once
// One running agent: its channels, sinks and sources, built from an AgentConfig.
//
// Lifecycle (main thread): Agent(config) builds and validates every component without
// touching the network (that is all `--check` does) → start(): channels open, then sinks
// (a Kafka sink starts the embedded cluster if it uses one), then sources → stop(timeout): sources stop reading and put
// what they read; sinks drain the channels into Kafka and flush; whatever is left is counted and logged.

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/api/channel.h"
#include "agent/api/component_spec.h"
#include "agent/api/config_tree.h"
#include "agent/api/sink.h"
#include "agent/api/source.h"

namespace sluice {

struct AgentTotals {
  uint64_t events_in = 0;   // events the sources put into channels
  uint64_t events_out = 0;  // events sinks sent (handed over or acknowledged)
  uint64_t events_failed = 0;
  uint64_t channel_held = 0;
  uint64_t channel_capacity = 0;
  std::chrono::nanoseconds put_blocked{0};  // sources waiting for room, summed
  int64_t sinks_queued = 0;                 // events waiting in the sinks' clients (Kafka producers)
};

class Agent {
 public:
  explicit Agent(const config::AgentConfig& config);
  ~Agent();

  void start();
  // Returns the number of events known lost during shutdown (0 on a clean drain).
  uint64_t stop(std::chrono::milliseconds timeout);

  // key=value lines for --ready-file: ports actually bound, and what sinks add (the embedded
  // Kafka's bootstrap).
  std::string ready_info() const;
  AgentTotals totals() const;
  const std::vector<std::unique_ptr<Source>>& sources() const { return sources_; }
  const std::vector<std::unique_ptr<Channel>>& channels() const { return channels_; }
  const std::vector<std::unique_ptr<Sink>>& sinks() const { return sinks_; }
  size_t source_count() const { return sources_.size(); }
  size_t channel_count() const { return channels_.size(); }
  size_t sink_count() const { return sinks_.size(); }

 private:
  void check_delivered_commits(const config::AgentConfig& config, const config::ComponentConfig& source,
                               std::string_view property) const;

  SharedState shared_;  // first: it outlives every component
  std::vector<std::unique_ptr<Channel>> channels_;
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::vector<std::unique_ptr<Source>> sources_;
  bool running_ = false;
};

}  // namespace sluice
