#pragma once
// The configuration model every file format parses into: one agent, its components, and
// each component's raw properties with their source locations. Typed values come later,
// from each component's property table (property_table.h), so that the properties file
// and YAML share one validation path.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/api/config_error.h"

namespace sluice::config {

// An interceptor and a channel selector are configured under their source
// (<source>.interceptors.<name>.*, <source>.selector.*), not listed at the agent's level. A sink
// group is listed (<agent>.sinkgroups), its sinks and its processor below it.
enum class Kind { source, channel, sink, interceptor, selector, sink_group };

std::string_view kind_plural(Kind kind);    // "sources"
std::string_view kind_singular(Kind kind);  // "source"
// A type as Flume reads it: its aliases in any case (made lower case here), class names as written.
std::string flume_type(std::string type);

struct PropertyValue {
  std::string value;
  SourceLocation where;
};

struct ComponentConfig {
  Kind kind = Kind::source;
  std::string name;        // "r1"
  std::string key_prefix;  // "tier2.sources.r1": for error messages
  std::string type;        // as written; the registry resolves aliases
  SourceLocation type_where;
  // Sources: the channels they fill; sinks: the one channel they drain; sink groups: their sinks.
  std::vector<std::string> channels;
  SourceLocation channels_where;
  // Every other property, keyed by its name below the component ("kafka.topic").
  std::map<std::string, PropertyValue> properties;

  std::string full_key(std::string_view property) const { return key_prefix + "." + std::string(property); }
  // Where `property` was set, or where the component was declared when it was not.
  SourceLocation where(std::string_view property) const;
  // Throws "<file:line>: <full key>: <message>".
  [[noreturn]] void fail(std::string_view property, const std::string& message) const;
};

struct AgentConfig {
  std::string agent_name;
  std::string file;
  // <agent>.monitoring.address = host:port: serve /metrics and /metrics.json there.
  PropertyValue monitoring_address;
  std::vector<ComponentConfig> sources;
  std::vector<ComponentConfig> channels;
  std::vector<ComponentConfig> sinks;
  // <agent>.sinkgroups: each a sink processor's settings (`type` = processor.type, `properties` =
  // processor.*, `channels` = its sinks).
  std::vector<ComponentConfig> sinkgroups;

  const ComponentConfig* find_channel(std::string_view name) const;
};

// Checks what every agent needs regardless of component types: each source names at least
// one defined channel, each sink exactly one, each sink group defined sinks no other group has.
// Throws ConfigError.
void check_wiring(const AgentConfig& config);

}  // namespace sluice::config

namespace sluice::config {

// A file flattened to "agent.kind.name.property" keys, in file order. The properties file
// is already flat; YAML flattens to the same shape, so one function builds the model.
struct FlatEntry {
  std::string key;
  std::string value;
  SourceLocation where;
};
using FlatConfig = std::vector<FlatEntry>;

// Selects `agent_name`'s keys (others belong to other agents, as in Flume) and builds the
// model. Throws ConfigError for unknown top-level keys, components that are configured but
// not listed, listed components without a type, duplicates.
AgentConfig assemble(const FlatConfig& flat, const std::string& agent_name, const std::string& file);

}  // namespace sluice::config
