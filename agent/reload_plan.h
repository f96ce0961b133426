#pragma once
// What a reload does, decided from the two configurations alone (no component is touched, so it
// is unit-tested case by case): which running sources, channels and sinks stay as they run, which
// stop, and for each channel that stops whether a channel of its name replaces it. Agent::reload
// carries it out.

#include <optional>
#include <string>
#include <vector>

#include "agent/api/config_tree.h"

namespace sluice {

struct ReloadPlan {
  // By index into the running configuration's lists: stays as it runs (same settings and, for a
  // source or sink, every channel it uses stays too).
  std::vector<bool> keep_source, keep_channel, keep_sink;
  // By index into the running channels: for one that stops, the index in the new configuration
  // of the channel of its name that replaces it (nullopt: removed, or kept).
  std::vector<std::optional<size_t>> successor;

  // Nothing to stop or start: the same components with the same settings.
  bool unchanged = false;
  // "keeping sources [..] channels [..] sinks [..]; stopping sources [..] ..." for the log.
  std::string summary;
};

ReloadPlan plan_reload(const config::AgentConfig& running, const config::AgentConfig& next);

// The component of that name in `list`, or null.
const config::ComponentConfig* component_named(const std::vector<config::ComponentConfig>& list,
                                               const std::string& name);

}  // namespace sluice
