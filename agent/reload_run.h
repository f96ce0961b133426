#pragma once
// A reload carried out: the plan (reload_plan.h) made real on the running agent, one member
// function per step, run in the order run() lists. What only the running objects can tell (a
// disk channel's directories, a source still draining, a component that does not start) is found
// out here; every other decision is the plan's.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "agent/reload_plan.h"

namespace sluice {

class ListenerPool;

class ReloadRun {
 public:
  ReloadRun(Agent& agent, const config::AgentConfig& next, std::chrono::milliseconds drain);
  ReloadOutcome run();

 private:
  // A running channel that stops, with the new one of its name.
  struct Replaced {
    Channel* old;
    size_t old_index;   // into the agent's channels
    size_t successor;   // into channels_
    bool same_storage;  // a disk channel whose successor uses its directories: it recovers them
  };

  ReloadOutcome refuse(const std::string& message);
  // Before anything stops (a failure changes nothing): the new components built, none running;
  // an error message, or nullopt.
  std::optional<std::string> build();
  std::optional<std::string> storage_conflict() const;
  std::optional<std::string> reserve_listeners();
  // The steps, in order.
  void retire_sources();
  void drain_stopping_channels();
  void stop_sources_putting_into(size_t channel);
  void close_channels_reopened_on_their_directories();
  void open_channels();
  void move_replaced_contents();
  void start_background_sinks();
  void start_sinks();
  void fall_back(const SinkFallback& fallback);
  void retire_replaced_sinks();
  void start_sources();
  void swap_in();
  void take_over_kept();
  void park_stopped_sources();
  void park_draining_channels();
  void settle_sink_groups();

  // The channel of the new configuration named so is open (kept, or opened by this reload).
  bool channel_open(const std::string& name) const;

  Agent& agent_;
  const config::AgentConfig running_;  // the agent's when the reload began (swap_in() replaces the agent's)
  const config::AgentConfig& next_;
  const std::chrono::milliseconds drain_;
  ReloadPlan plan_;
  std::vector<bool> keep_sink_;  // the plan's, and the predecessors of sinks that did not start
  config::AgentConfig applied_;  // next_, less what did not start, and what fell back
  std::map<std::string, Channel*> kept_channels_;
  // The new components, in next_'s order; null where a running one is taken over.
  std::vector<std::unique_ptr<Channel>> channels_;
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::vector<std::unique_ptr<Source>> sources_;
  BuildContext context_;
  SinkGroups groups_;  // made for the sinks built now
  std::shared_ptr<ListenerPool> listeners_;
  Deadline deadline_{};
  bool failed_ = false;

  std::vector<bool> source_retiring_;         // by running source: drains on in the background
  std::set<const Channel*> fed_by_retiring_;  // channels a source draining in the background puts into
  std::vector<Replaced> replaced_;
  std::vector<size_t> removed_;                      // running channels that go for good
  std::vector<bool> opened_;                         // by new channel
  std::vector<size_t> kept_draining_;                // replaced channels that still hold events
  std::vector<Agent::Retired> drain_in_background_;  // their sinks of the old settings, as kept_draining_
};

}  // namespace sluice
