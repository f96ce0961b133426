#pragma once
// Reads a configuration file into the flat form both formats share: Flume properties, or YAML
// (chosen by the extension .yaml/.yml), then Flume's config filters (config_filters.h:
// ${f1['KEY']}) and ${VAR} substitution from the environment.
//
// YAML is the same model nested: agent → sources|channels|sinks → name → property. Lists of
// components come from the map keys, property names may keep their dots (kafka.topic) or nest
// (kafka: {topic: x}), and a sequence is a space-separated list:
//
//   tier2:
//     sources:
//       r1: {type: multiport_syslogtcp, channels: c1, ports: [5140, 5141]}
//     channels:
//       c1: {type: memory, capacity: 60000}
//     sinks:
//       kk1: {type: kafka, channel: c1, brokerList: "${KAFKA_BROKERS}", key: 0}

#include <string>

#include "agent/api/config_tree.h"

namespace sluice::config {

enum class FileFormat { properties, yaml };
FileFormat format_of(const std::string& path);

FlatConfig parse_yaml(const std::string& text, const std::string& file);

// ${NAME} and ${NAME:-default} in values; an unset NAME without a default is a ConfigError
// naming the file, line and key.
void substitute_environment(FlatConfig& flat);

// Reads, parses (by extension), applies the config filters and substitutes.
// The file's keys and values as written: no ${...} replaced, no config filter run or removed
// (what `sluice config convert` prints, so that it round-trips and runs nothing).
FlatConfig load_config_file_as_written(const std::string& path);
FlatConfig load_config_file(const std::string& path);

// The other format's text for the same flat configuration (for `sluice config convert`).
std::string to_properties(const FlatConfig& flat);
std::string to_yaml(const FlatConfig& flat);

}  // namespace sluice::config
