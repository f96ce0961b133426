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

namespace {

constexpr Kind kComponentKinds[3] = {Kind::source, Kind::channel, Kind::sink};

// The agent's keys, sorted by what they configure (one pass over the file).
struct SortedKeys {
  ListedComponents listed[3];                       // <agent>.sources, .channels, .sinks
  std::vector<const FlatEntry*> component_entries;  // <agent>.<sources|channels|sinks>.<name>...
  ListedComponents groups_listed;                   // <agent>.sinkgroups
  std::vector<const FlatEntry*> group_entries;      // <agent>.sinkgroups.<name>...
  bool any = false;                                 // the agent has a key at all
  std::vector<std::string> other_agents;            // agents of the file's other keys
};

// A config filter reference left as written: the agent has no filter of that name.
void check_filter_references(const FlatEntry& e, const std::string& prefix) {
  for (size_t at = e.value.find("${"); at != std::string::npos; at = e.value.find("${", at + 2)) {
    const size_t bracket = e.value.find('[', at), close = e.value.find('}', at);
    if (bracket == std::string::npos || (close != std::string::npos && close < bracket)) continue;
    throw ConfigError(e.where.to_string() + ": " + e.key + ": " + e.value.substr(at + 2, bracket - at - 2) +
                      " is not a config filter of this agent (list it in " + prefix + "configfilters)");
  }
}

// One of the agent's keys into `sorted` (or the config's monitoring address); an unknown key throws.
void sort_key(const FlatEntry& e, const std::string& prefix, SortedKeys& sorted, AgentConfig& config) {
  const std::string_view rest = std::string_view(e.key).substr(prefix.size());
  bool matched = false;
  for (int k = 0; k < 3; ++k) {
    const std::string_view plural = kind_plural(kComponentKinds[k]);
    if (rest == plural) {
      sorted.listed[k] = {parse_word_list(e.value), e.where, true};
      matched = true;
    } else if (rest.starts_with(plural) && rest.size() > plural.size() && rest[plural.size()] == '.') {
      sorted.component_entries.push_back(&e);
      matched = true;
    }
  }
  if (matched) return;
  if (rest == "monitoring.address") {
    config.monitoring_address = PropertyValue{e.value, e.where};
  } else if (rest == "sinkgroups") {
    sorted.groups_listed = {parse_word_list(e.value), e.where, true};
  } else if (rest.starts_with("sinkgroups.")) {
    sorted.group_entries.push_back(&e);
  } else {
    throw ConfigError(e.where.to_string() + ": " + e.key + ": unknown key; expected " + prefix + "sources, " + prefix +
                      "channels, " + prefix + "sinks, " + prefix + "sinkgroups, " + prefix + "monitoring.address or " +
                      prefix + "<sources|channels|sinks|sinkgroups>.<name>.<property>");
  }
}

SortedKeys sort_keys(const FlatConfig& flat, const std::string& prefix, AgentConfig& config) {
  SortedKeys sorted;
  std::map<std::string, SourceLocation> seen;
  for (const FlatEntry& e : flat) {
    if (!e.key.starts_with(prefix)) {
      std::string agent = e.key.substr(0, e.key.find('.'));
      if (std::find(sorted.other_agents.begin(), sorted.other_agents.end(), agent) == sorted.other_agents.end())
        sorted.other_agents.push_back(agent);
      continue;
    }
    if (auto [it, inserted] = seen.emplace(e.key, e.where); !inserted)
      throw ConfigError(e.where.to_string() + ": " + e.key + " is set twice (first at " + it->second.to_string() + ")");
    sorted.any = true;
    check_filter_references(e, prefix);
    sort_key(e, prefix, sorted, config);
  }
  return sorted;
}

std::vector<ComponentConfig>& components_of(AgentConfig& config, int k) {
  return k == 0 ? config.sources : k == 1 ? config.channels : config.sinks;
}

// <agent>.sources (channels, sinks) = names: a component each, in the order listed.
void list_components(AgentConfig& config, const std::string& prefix, const ListedComponents (&listed)[3]) {
  for (int k = 0; k < 3; ++k) {
    const std::string plural(kind_plural(kComponentKinds[k]));
    for (const std::string& name : listed[k].names) {
      auto& group = components_of(config, k);
      if (component_named_in(group, name))
        throw ConfigError(listed[k].where.to_string() + ": " + prefix + plural + " lists '" + name + "' twice");
      ComponentConfig c;
      c.kind = kComponentKinds[k];
      c.name = name;
      c.key_prefix = prefix + plural + "." + name;
      c.type_where = listed[k].where;
      group.push_back(std::move(c));
    }
  }
}

// <agent>.<sources|channels|sinks>.<name>.<property> = value, into the component listed by that name.
void set_component_property(AgentConfig& config, const std::string& prefix, const ListedComponents (&listed)[3],
                            const FlatEntry& e) {
  std::string_view rest = std::string_view(e.key).substr(prefix.size());
  int k = 0;
  while (!rest.starts_with(std::string(kind_plural(kComponentKinds[k])) + ".")) ++k;
  const Kind kind = kComponentKinds[k];
  rest.remove_prefix(kind_plural(kind).size() + 1);
  const size_t dot = rest.find('.');
  const std::string name(rest.substr(0, dot));
  ComponentConfig* c = component_named_in(components_of(config, k), name);
  if (!c)
    throw ConfigError(e.where.to_string() + ": " + e.key + ": " + std::string(kind_singular(kind)) + " '" + name +
                      "' is not listed in " + prefix + std::string(kind_plural(kind)) +
                      (listed[k].present ? "" : " (that key is missing)"));
  if (dot == std::string_view::npos)
    throw ConfigError(e.where.to_string() + ": " + e.key + ": expected a property below the component, e.g. " + e.key +
                      ".type");
  const std::string property(rest.substr(dot + 1));
  const bool is_channel_list =
      (kind == Kind::source && property == "channels") || (kind == Kind::sink && property == "channel");
  if (property == "type") {
    c->type = e.value;
    c->type_where = e.where;
  } else if (is_channel_list) {
    c->channels = parse_word_list(e.value);
    c->channels_where = e.where;
  } else {
    c->properties[property] = PropertyValue{e.value, e.where};
  }
}

}  // namespace

AgentConfig assemble(const FlatConfig& flat, const std::string& agent_name, const std::string& file) {
  AgentConfig config;
  config.agent_name = agent_name;
  config.file = file;
  const std::string prefix = agent_name + ".";
  const SortedKeys sorted = sort_keys(flat, prefix, config);
  if (!sorted.any) {
    std::string found;
    for (const std::string& a : sorted.other_agents) found += (found.empty() ? "" : ", ") + a;
    throw ConfigError(file + ": no configuration for agent '" + agent_name + "'" +
                      (found.empty() ? std::string(" (the file has no keys)")
                                     : " (agents in this file: " + found + "; choose one with -n)"));
  }
  list_components(config, prefix, sorted.listed);
  for (const FlatEntry* e : sorted.component_entries) set_component_property(config, prefix, sorted.listed, *e);
  assemble_sink_groups(config, prefix, sorted.groups_listed, sorted.group_entries);
  for (int k = 0; k < 3; ++k)
    for (const ComponentConfig& c : components_of(config, k))
      if (c.type.empty())
        throw ConfigError(c.type_where.to_string() + ": " + c.full_key("type") + " is missing: every listed " +
                          std::string(kind_singular(c.kind)) + " needs a type");
  check_wiring(config);
  return config;
}

}  // namespace sluice::config
