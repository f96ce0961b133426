#include "agent/api/config_tree.h"
#include "agent/api/property_values.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace sluice::config {

std::string_view kind_plural(Kind kind) {
  switch (kind) {
    case Kind::source: return "sources";
    case Kind::channel: return "channels";
    case Kind::sink: return "sinks";
    case Kind::interceptor: return "interceptors";
    case Kind::selector: return "selectors";
    case Kind::sink_group: return "sinkgroups";
  }
  return "?";
}

std::string_view kind_singular(Kind kind) {
  switch (kind) {
    case Kind::source: return "source";
    case Kind::channel: return "channel";
    case Kind::sink: return "sink";
    case Kind::interceptor: return "interceptor";
    case Kind::selector: return "channel selector";
    case Kind::sink_group: return "sink group";
  }
  return "?";
}

std::string flume_type(std::string type) {
  if (type.find('.') == std::string::npos)
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return type;
}

SourceLocation ComponentConfig::where(std::string_view property) const {
  auto it = properties.find(std::string(property));
  return it != properties.end() ? it->second.where : type_where;
}

void ComponentConfig::fail(std::string_view property, const std::string& message) const {
  throw ConfigError(where(property).to_string() + ": " + full_key(property) + ": " + message);
}

const ComponentConfig* AgentConfig::find_channel(std::string_view name) const {
  auto it = std::find_if(channels.begin(), channels.end(), [&](const ComponentConfig& c) { return c.name == name; });
  return it == channels.end() ? nullptr : &*it;
}

void check_wiring(const AgentConfig& config) {
  const std::string agent = config.agent_name;
  if (config.sources.empty() && config.sinks.empty())
    throw ConfigError(config.file + ": agent '" + agent + "' defines no sources and no sinks");
  for (const auto& group : {&config.sources, &config.sinks}) {
    for (const ComponentConfig& c : *group) {
      const bool is_sink = c.kind == Kind::sink;
      const std::string key = c.full_key(is_sink ? "channel" : "channels");
      const std::string where = c.channels_where.line ? c.channels_where.to_string() : c.type_where.to_string();
      if (c.channels.empty())
        throw ConfigError(where + ": " + key + " is missing: every " + std::string(kind_singular(c.kind)) + " needs " +
                          (is_sink ? "the channel it drains" : "the channels it fills"));
      if (is_sink && c.channels.size() != 1)
        throw ConfigError(where + ": " + key + ": a sink drains exactly one channel, got " +
                          std::to_string(c.channels.size()));
      for (const std::string& channel : c.channels) {
        if (!config.find_channel(channel))
          throw ConfigError(where + ": " + key + ": channel '" + channel + "' is not defined (listed in " + agent +
                            ".channels)");
      }
    }
  }
  std::map<std::string, std::string> group_of;
  for (const ComponentConfig& g : config.sinkgroups) {
    const std::string key = agent + ".sinkgroups." + g.name + ".sinks";
    const std::string where = g.channels_where.line ? g.channels_where.to_string() : g.type_where.to_string();
    if (g.channels.empty()) throw ConfigError(where + ": " + key + " is missing: every sink group needs its sinks");
    for (const std::string& sink : g.channels) {
      if (std::none_of(config.sinks.begin(), config.sinks.end(),
                       [&](const ComponentConfig& s) { return s.name == sink; }))
        throw ConfigError(where + ": " + key + ": sink '" + sink + "' is not defined (listed in " + agent + ".sinks)");
      if (const auto [it, added] = group_of.emplace(sink, g.name); !added)
        throw ConfigError(where + ": " + key + ": sink '" + sink + "' is in sink group '" + it->second +
                          "' already: a sink belongs to one group at most");
    }
  }
}

}  // namespace sluice::config

namespace sluice::config {
namespace {

struct ListedComponents {
  std::vector<std::string> names;
  SourceLocation where;
  bool present = false;
};

ComponentConfig* component_named_in(std::vector<ComponentConfig>& list, const std::string& name) {
  const auto it = std::find_if(list.begin(), list.end(), [&](const ComponentConfig& c) { return c.name == name; });
  return it == list.end() ? nullptr : &*it;
}

// <agent>.sinkgroups = g1, <agent>.sinkgroups.g1.sinks = k1 k2,
// <agent>.sinkgroups.g1.processor.type = failover, <agent>.sinkgroups.g1.processor.<property>.
void assemble_sink_groups(AgentConfig& config, const std::string& prefix, const ListedComponents& listed,
                          const std::vector<const FlatEntry*>& entries) {
  for (const std::string& name : listed.names) {
    if (component_named_in(config.sinkgroups, name))
      throw ConfigError(listed.where.to_string() + ": " + prefix + "sinkgroups lists '" + name + "' twice");
    ComponentConfig g;
    g.kind = Kind::sink_group;
    g.name = name;
    g.key_prefix = prefix + "sinkgroups." + name + ".processor";
    g.type = "default";  // Flume's, when processor.type is not set
    g.type_where = listed.where;
    config.sinkgroups.push_back(std::move(g));
  }
  for (const FlatEntry* e : entries) {
    const std::string_view rest =
        std::string_view(e->key).substr(prefix.size() + std::string_view("sinkgroups.").size());
    const size_t dot = rest.find('.');
    const std::string name(rest.substr(0, dot));
    ComponentConfig* g = component_named_in(config.sinkgroups, name);
    if (!g)
      throw ConfigError(e->where.to_string() + ": " + e->key + ": sink group '" + name + "' is not listed in " +
                        prefix + "sinkgroups" + (listed.present ? "" : " (that key is missing)"));
    const std::string_view property = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    if (property == "sinks") {
      g->channels = parse_word_list(e->value);
      g->channels_where = e->where;
    } else if (property == "processor.type") {
      g->type = e->value;
      g->type_where = e->where;
      g->type = flume_type(g->type);
    } else if (property.starts_with("processor.")) {
      g->properties[std::string(property.substr(std::string_view("processor.").size()))] =
          PropertyValue{e->value, e->where};
    } else {
      throw ConfigError(e->where.to_string() + ": " + e->key + ": unknown key; a sink group has sinks and processor.*");
    }
  }
}

}  // namespace

AgentConfig assemble(const FlatConfig& flat, const std::string& agent_name, const std::string& file) {
  AgentConfig config;
  config.agent_name = agent_name;
  config.file = file;
  const std::string prefix = agent_name + ".";

  std::map<std::string, SourceLocation> seen;
  ListedComponents listed[3];
  const Kind kinds[3] = {Kind::source, Kind::channel, Kind::sink};
  std::vector<const FlatEntry*> component_entries;
  ListedComponents groups_listed;
  std::vector<const FlatEntry*> group_entries;
  std::vector<std::string> other_agents;

  for (const FlatEntry& e : flat) {
    if (!e.key.starts_with(prefix)) {
      std::string agent = e.key.substr(0, e.key.find('.'));
      if (std::find(other_agents.begin(), other_agents.end(), agent) == other_agents.end())
        other_agents.push_back(agent);
      continue;
    }
    if (auto [it, inserted] = seen.emplace(e.key, e.where); !inserted)
      throw ConfigError(e.where.to_string() + ": " + e.key + " is set twice (first at " + it->second.to_string() + ")");
    // A config filter reference left as written: the agent has no filter of that name.
    for (size_t at = e.value.find("${"); at != std::string::npos; at = e.value.find("${", at + 2)) {
      const size_t bracket = e.value.find('[', at), close = e.value.find('}', at);
      if (bracket == std::string::npos || (close != std::string::npos && close < bracket)) continue;
      throw ConfigError(e.where.to_string() + ": " + e.key + ": " + e.value.substr(at + 2, bracket - at - 2) +
                        " is not a config filter of this agent (list it in " + prefix + "configfilters)");
    }
    std::string_view rest = std::string_view(e.key).substr(prefix.size());
    bool matched = false;
    for (int k = 0; k < 3; ++k) {
      std::string_view plural = kind_plural(kinds[k]);
      if (rest == plural) {
        listed[k] = {parse_word_list(e.value), e.where, true};
        matched = true;
      } else if (rest.starts_with(plural) && rest.size() > plural.size() && rest[plural.size()] == '.') {
        component_entries.push_back(&e);
        matched = true;
      }
    }
    if (matched) continue;
    if (rest == "monitoring.address") {
      config.monitoring_address = PropertyValue{e.value, e.where};
      continue;
    }
    if (rest == "sinkgroups") {
      groups_listed = {parse_word_list(e.value), e.where, true};
      continue;
    }
    if (rest.starts_with("sinkgroups.")) {
      group_entries.push_back(&e);
      continue;
    }
    throw ConfigError(e.where.to_string() + ": " + e.key + ": unknown key; expected " + prefix + "sources, " + prefix +
                      "channels, " + prefix + "sinks, " + prefix + "sinkgroups, " + prefix + "monitoring.address or " +
                      prefix + "<sources|channels|sinks|sinkgroups>.<name>.<property>");
  }

  if (seen.empty()) {
    std::string found;
    for (const std::string& a : other_agents) found += (found.empty() ? "" : ", ") + a;
    throw ConfigError(file + ": no configuration for agent '" + agent_name + "'" +
                      (found.empty() ? std::string(" (the file has no keys)")
                                     : " (agents in this file: " + found + "; choose one with -n)"));
  }

  std::vector<ComponentConfig>* groups[3] = {&config.sources, &config.channels, &config.sinks};
  for (int k = 0; k < 3; ++k) {
    for (const std::string& name : listed[k].names) {
      auto& group = *groups[k];
      if (std::any_of(group.begin(), group.end(), [&](const ComponentConfig& c) { return c.name == name; }))
        throw ConfigError(listed[k].where.to_string() + ": " + prefix + std::string(kind_plural(kinds[k])) +
                          " lists '" + name + "' twice");
      ComponentConfig c;
      c.kind = kinds[k];
      c.name = name;
      c.key_prefix = prefix + std::string(kind_plural(kinds[k])) + "." + name;
      c.type_where = listed[k].where;
      group.push_back(std::move(c));
    }
  }

  for (const FlatEntry* e : component_entries) {
    std::string_view rest = std::string_view(e->key).substr(prefix.size());
    int k = 0;
    while (!rest.starts_with(std::string(kind_plural(kinds[k])) + ".")) ++k;
    rest.remove_prefix(kind_plural(kinds[k]).size() + 1);
    const size_t dot = rest.find('.');
    const std::string name(rest.substr(0, dot));
    auto& group = *groups[k];
    auto it = std::find_if(group.begin(), group.end(), [&](const ComponentConfig& c) { return c.name == name; });
    if (it == group.end())
      throw ConfigError(e->where.to_string() + ": " + e->key + ": " + std::string(kind_singular(kinds[k])) + " '" +
                        name + "' is not listed in " + prefix + std::string(kind_plural(kinds[k])) +
                        (listed[k].present ? "" : " (that key is missing)"));
    if (dot == std::string_view::npos)
      throw ConfigError(e->where.to_string() + ": " + e->key + ": expected a property below the component, e.g. " +
                        e->key + ".type");
    const std::string property(rest.substr(dot + 1));
    const bool is_channel_list =
        (kinds[k] == Kind::source && property == "channels") || (kinds[k] == Kind::sink && property == "channel");
    if (property == "type") {
      it->type = e->value;
      it->type_where = e->where;
    } else if (is_channel_list) {
      it->channels = parse_word_list(e->value);
      it->channels_where = e->where;
    } else {
      it->properties[property] = PropertyValue{e->value, e->where};
    }
  }

  assemble_sink_groups(config, prefix, groups_listed, group_entries);
  for (auto* group : groups)
    for (const ComponentConfig& c : *group)
      if (c.type.empty())
        throw ConfigError(c.type_where.to_string() + ": " + c.full_key("type") + " is missing: every listed " +
                          std::string(kind_singular(c.kind)) + " needs a type");
  check_wiring(config);
  return config;
}

}  // namespace sluice::config
