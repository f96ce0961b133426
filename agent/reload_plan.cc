#include "agent/reload_plan.h"

#include <algorithm>
#include <set>

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

}  // namespace

const config::ComponentConfig* component_named(const std::vector<config::ComponentConfig>& list,
                                               const std::string& name) {
  const auto it = std::find_if(list.begin(), list.end(), [&](const auto& c) { return c.name == name; });
  return it == list.end() ? nullptr : &*it;
}

ReloadPlan plan_reload(const config::AgentConfig& running, const config::AgentConfig& next) {
  ReloadPlan plan;
  plan.keep_channel.resize(running.channels.size());
  plan.successor.resize(running.channels.size());
  plan.keep_sink.resize(running.sinks.size());
  plan.keep_source.resize(running.sources.size());
  std::set<std::string> kept_channels;
  for (size_t i = 0; i < running.channels.size(); ++i) {
    const config::ComponentConfig* n = component_named(next.channels, running.channels[i].name);
    plan.keep_channel[i] = n && same_settings(running.channels[i], *n);
    if (plan.keep_channel[i])
      kept_channels.insert(n->name);
    else if (n)
      plan.successor[i] = static_cast<size_t>(n - next.channels.data());
  }
  const auto channels_kept = [&](const config::ComponentConfig& c) {
    return std::all_of(c.channels.begin(), c.channels.end(),
                       [&](const auto& name) { return kept_channels.count(name) > 0; });
  };
  for (size_t i = 0; i < running.sinks.size(); ++i) {
    const config::ComponentConfig* n = component_named(next.sinks, running.sinks[i].name);
    plan.keep_sink[i] = n && same_settings(running.sinks[i], *n) && channels_kept(*n) &&
                        group_settings(running, n->name) == group_settings(next, n->name);
  }
  // A group is one object its sinks share: one of them rebuilt rebuilds them all.
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
  for (size_t i = 0; i < running.sources.size(); ++i) {
    const config::ComponentConfig* n = component_named(next.sources, running.sources[i].name);
    plan.keep_source[i] = n && same_settings(running.sources[i], *n) && channels_kept(*n);
  }
  const auto all = [](const std::vector<bool>& v) { return std::all_of(v.begin(), v.end(), [](bool b) { return b; }); };
  plan.unchanged = all(plan.keep_channel) && all(plan.keep_sink) && all(plan.keep_source) &&
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

}  // namespace sluice
