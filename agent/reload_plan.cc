#include "agent/reload_plan.h"

#include <algorithm>
#include <cassert>

namespace sluice {
namespace {

// Same type, same channels, same properties with the same values (where they were written in
// the file does not matter: a comment added above them changes nothing).
bool same_settings(const config::ComponentConfig& a, const config::ComponentConfig& b) {
  if (a.type != b.type || a.channels != b.channels || a.properties.size() != b.properties.size()) return false;
  return std::equal(a.properties.begin(), a.properties.end(), b.properties.begin(), [](const auto& x, const auto& y) {
    return x.first == y.first && x.second.value == y.second.value;
  });
}

// The settings of the sink group `sink` is in (name, processor, sinks), empty if none: a sink
// whose group changes in any way is rebuilt with the group, since the group is one object
// shared by all its sinks.
std::string group_settings(const config::AgentConfig& config, const std::string& sink) {
  for (const config::ComponentConfig& g : config.sinkgroups) {
    if (std::find(g.channels.begin(), g.channels.end(), sink) == g.channels.end()) continue;
    std::string text = g.name + "\n" + g.type + "\n";
    for (const std::string& member : g.channels) text += member + " ";
    for (const auto& [key, value] : g.properties) text += "\n" + key + "=" + value.value;
    return text;
  }
  return {};
}

// The names in `list` whose flag is `wanted`, for the log line.
std::string names_of(const std::vector<config::ComponentConfig>& list, const std::vector<bool>& flags, bool wanted) {
  std::string out;
  for (size_t i = 0; i < list.size(); ++i)
    if (flags[i] == wanted) out += (out.empty() ? "" : " ") + list[i].name;
  return out.empty() ? "-" : out;
}

bool all_of(const std::vector<bool>& flags) {
  return std::all_of(flags.begin(), flags.end(), [](bool flag) { return flag; });
}

// A channel stays if one of its name has the same settings; else one of its name replaces it.
void plan_channels(const config::AgentConfig& running, const config::AgentConfig& next, ReloadPlan& plan) {
  plan.keep_channel.resize(running.channels.size());
  plan.successor.resize(running.channels.size());
  for (size_t i = 0; i < running.channels.size(); ++i) {
    const config::ComponentConfig* n = component_named(next.channels, running.channels[i].name);
    plan.keep_channel[i] = n && same_settings(running.channels[i], *n);
    if (n && !plan.keep_channel[i]) plan.successor[i] = static_cast<size_t>(n - next.channels.data());
  }
}

bool channel_kept(const config::AgentConfig& running, const ReloadPlan& plan, const std::string& name) {
  const config::ComponentConfig* c = component_named(running.channels, name);
  return c && plan.keep_channel[static_cast<size_t>(c - running.channels.data())];
}

bool channels_kept(const config::AgentConfig& running, const ReloadPlan& plan, const config::ComponentConfig& c) {
  return std::all_of(c.channels.begin(), c.channels.end(),
                     [&](const std::string& name) { return channel_kept(running, plan, name); });
}

// A sink stays with its settings, its channel and its group's settings; a group is one object
// its sinks share, so one of them rebuilt rebuilds them all. One that stops drains or settles
// according to what became of its channel.
void plan_sinks(const config::AgentConfig& running, const config::AgentConfig& next, ReloadPlan& plan) {
  plan.keep_sink.resize(running.sinks.size());
  for (size_t i = 0; i < running.sinks.size(); ++i) {
    const config::ComponentConfig* n = component_named(next.sinks, running.sinks[i].name);
    plan.keep_sink[i] = n && same_settings(running.sinks[i], *n) && channels_kept(running, plan, *n) &&
                        group_settings(running, n->name) == group_settings(next, n->name);
  }
  for (const config::ComponentConfig& g : running.sinkgroups) {
    const auto member_kept = [&](const std::string& sink) {
      const config::ComponentConfig* c = component_named(running.sinks, sink);
      return c && plan.keep_sink[static_cast<size_t>(c - running.sinks.data())];
    };
    if (std::all_of(g.channels.begin(), g.channels.end(), member_kept)) continue;
    for (const std::string& sink : g.channels)
      if (const config::ComponentConfig* c = component_named(running.sinks, sink))
        plan.keep_sink[static_cast<size_t>(c - running.sinks.data())] = false;
  }
  plan.sink_fate.resize(running.sinks.size());
  for (size_t i = 0; i < running.sinks.size(); ++i) {
    const size_t channel = index_named(running.channels, running.sinks[i].channels.front());
    plan.sink_fate[i] = plan.keep_sink[i]            ? SinkFate::kept
                        : plan.keep_channel[channel] ? SinkFate::retires
                        : plan.successor[channel]    ? SinkFate::drains_then_stops
                                                     : SinkFate::drains_in_background;
  }
}

void plan_sources(const config::AgentConfig& running, const config::AgentConfig& next, ReloadPlan& plan) {
  plan.keep_source.resize(running.sources.size());
  for (size_t i = 0; i < running.sources.size(); ++i) {
    const config::ComponentConfig* n = component_named(next.sources, running.sources[i].name);
    plan.keep_source[i] = n && same_settings(running.sources[i], *n) && channels_kept(running, plan, *n);
  }
}

// `built[i]`: no running component of next[i]'s name stays.
std::vector<bool> built(const std::vector<config::ComponentConfig>& running, const std::vector<bool>& kept,
                        const std::vector<config::ComponentConfig>& next) {
  std::vector<bool> out(next.size());
  for (size_t i = 0; i < next.size(); ++i) {
    const config::ComponentConfig* old = component_named(running, next[i].name);
    out[i] = !(old && kept[static_cast<size_t>(old - running.data())]);
  }
  return out;
}

// What is built, and what goes on in place of a new sink that cannot start.
void plan_builds(const config::AgentConfig& running, const config::AgentConfig& next, ReloadPlan& plan) {
  plan.build_channel = built(running.channels, plan.keep_channel, next.channels);
  plan.build_sink = built(running.sinks, plan.keep_sink, next.sinks);
  plan.build_source = built(running.sources, plan.keep_source, next.sources);
  plan.fallback.resize(next.sinks.size());
  for (size_t i = 0; i < next.sinks.size(); ++i) {
    const config::ComponentConfig* old = component_named(running.sinks, next.sinks[i].name);
    const std::string& channel = next.sinks[i].channels.front();
    if (plan.build_sink[i] && old && old->channels.front() == channel && channel_kept(running, plan, channel))
      plan.fallback[i] = static_cast<size_t>(old - running.sinks.data());
  }
  for (const config::ComponentConfig& g : next.sinkgroups)
    for (const std::string& member : g.channels)
      if (plan.build_sink[index_named(next.sinks, member)]) plan.rebuilt_groups.insert(g.name);
}

}  // namespace

const config::ComponentConfig* component_named(const std::vector<config::ComponentConfig>& list,
                                               const std::string& name) {
  const auto it = std::find_if(list.begin(), list.end(), [&](const auto& c) { return c.name == name; });
  return it == list.end() ? nullptr : &*it;
}

size_t index_named(const std::vector<config::ComponentConfig>& list, const std::string& name) {
  const config::ComponentConfig* c = component_named(list, name);
  assert(c);
  return static_cast<size_t>(c - list.data());
}

ReloadPlan plan_reload(const config::AgentConfig& running, const config::AgentConfig& next) {
  ReloadPlan plan;
  plan_channels(running, next, plan);
  plan_sinks(running, next, plan);
  plan_sources(running, next, plan);
  plan_builds(running, next, plan);
  plan.unchanged = all_of(plan.keep_channel) && all_of(plan.keep_sink) && all_of(plan.keep_source) &&
                   next.channels.size() == running.channels.size() && next.sinks.size() == running.sinks.size() &&
                   next.sources.size() == running.sources.size();
  plan.summary = "keeping sources [" + names_of(running.sources, plan.keep_source, true) + "] channels [" +
                 names_of(running.channels, plan.keep_channel, true) + "] sinks [" +
                 names_of(running.sinks, plan.keep_sink, true) + "]; stopping sources [" +
                 names_of(running.sources, plan.keep_source, false) + "] channels [" +
                 names_of(running.channels, plan.keep_channel, false) + "] sinks [" +
                 names_of(running.sinks, plan.keep_sink, false) + "] (changed or removed)";
  return plan;
}

SinkFallback plan_sink_fallback(const ReloadPlan& plan, const config::AgentConfig& running,
                                const config::AgentConfig& next, const std::set<size_t>& not_started) {
  SinkFallback out;
  out.fall_back = not_started;
  for (const config::ComponentConfig& g : next.sinkgroups) {
    if (!plan.rebuilt_groups.count(g.name) ||
        std::none_of(g.channels.begin(), g.channels.end(),
                     [&](const std::string& member) { return not_started.count(index_named(next.sinks, member)); }))
      continue;
    SinkFallback::Group group{g.name, {}, {}};
    if (const config::ComponentConfig* before = component_named(running.sinkgroups, g.name))
      group.previous = static_cast<size_t>(before - running.sinkgroups.data());
    for (const std::string& member : g.channels) {
      const size_t i = index_named(next.sinks, member);
      if (!plan.build_sink[i]) continue;
      if (!not_started.count(i)) out.stop_again.insert(i);
      out.fall_back.insert(i);
    }
    out.groups.push_back(std::move(group));
  }
  out.keep_sink = plan.keep_sink;
  for (const size_t i : out.fall_back)
    if (plan.fallback[i]) out.keep_sink[*plan.fallback[i]] = true;
  for (SinkFallback::Group& group : out.groups) {
    if (!group.previous) continue;
    const config::ComponentConfig& before = running.sinkgroups[*group.previous];
    for (size_t m = 0; m < before.channels.size(); ++m) {
      const config::ComponentConfig* old = component_named(running.sinks, before.channels[m]);
      if (!old || !out.keep_sink[static_cast<size_t>(old - running.sinks.data())]) group.leaving.push_back(m);
    }
  }
  return out;
}

}  // namespace sluice
