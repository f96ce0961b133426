#pragma once
// What a reload does, decided from the two configurations alone (no component is touched, so it
// is unit-tested rule by rule): which running sources, channels and sinks stay as they run, which
// stop and how, which channel replaces which, which components of the new configuration are built,
// and what goes on in place of a new sink that cannot start. ReloadRun (reload_run.h) carries it
// out, step by step; only what depends on running objects (a disk channel's directories, a source
// still draining, a sink that does not start) is found out there.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/api/config_tree.h"

namespace sluice {

// What becomes of a running sink.
enum class SinkFate : uint8_t {
  kept,                  // runs on as it is
  retires,               // its channel stays, the sink changed or went: it stops taking and settles what it took
  drains_then_stops,     // its channel is replaced: it drains it into Kafka until the reload's deadline, then stops
  drains_in_background,  // its channel is removed: it drains it in the background until it is empty
};

struct ReloadPlan {
  // By index into the running configuration's lists: stays as it runs (same settings and, for a
  // source or sink, every channel it uses stays too).
  std::vector<bool> keep_source, keep_channel, keep_sink;
  // By index into the running channels: for one that stops, the index in the new configuration
  // of the channel of its name that replaces it (nullopt: removed, or kept).
  std::vector<std::optional<size_t>> successor;
  // By index into the running sinks.
  std::vector<SinkFate> sink_fate;

  // By index into the new configuration's lists: built by this reload (else the running one of
  // its name is taken over as it runs).
  std::vector<bool> build_channel, build_sink, build_source;
  // By index into the new sinks: the running sink of its name on the same channel, a channel
  // that stays; it goes on in the new one's place, with its previous settings, if the new one
  // cannot start.
  std::vector<std::optional<size_t>> fallback;
  // The new configuration's sink groups with a sink built by this reload: the reload makes their
  // object (a group is one object its sinks share).
  std::set<std::string> rebuilt_groups;

  // Nothing to stop or start: the same components with the same settings.
  bool unchanged = false;
  // "keeping sources [..] channels [..] sinks [..]; stopping sources [..] ..." for the log.
  std::string summary;
};

ReloadPlan plan_reload(const config::AgentConfig& running, const config::AgentConfig& next);

// What follows from new sinks that did not start: each goes on as its running predecessor, if it
// has one (ReloadPlan::fallback); and a rebuilt sink group with such a sink keeps its previous
// settings whole: its other new sinks stop again and fall back too, and a member of the group as
// it ran that is not running any more is never chosen.
struct SinkFallback {
  std::set<size_t> stop_again;  // new sinks that started: stopped again, their group falls back
  std::set<size_t> fall_back;   // new sinks (not started or stopped again) whose predecessor goes on
  std::vector<bool> keep_sink;  // by running sink: the plan's, and every predecessor that goes on
  struct Group {
    std::string name;
    std::optional<size_t> previous;  // index into the running sink groups; nullopt: a new group, left out
    std::vector<size_t> leaving;     // members (by position) of the running group never chosen again
  };
  std::vector<Group> groups;  // the rebuilt groups that keep their previous settings
};

SinkFallback plan_sink_fallback(const ReloadPlan& plan, const config::AgentConfig& running,
                                const config::AgentConfig& next, const std::set<size_t>& not_started);

// The component of that name in `list`, or null.
const config::ComponentConfig* component_named(const std::vector<config::ComponentConfig>& list,
                                               const std::string& name);
// Its index in `list`; `name` must be there.
size_t index_named(const std::vector<config::ComponentConfig>& list, const std::string& name);

}  // namespace sluice
