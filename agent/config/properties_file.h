#pragma once
// Reads Flume's properties format (java.util.Properties syntax: `key = value`, `key: value`,
// `key value`, `#`/`!` comments, trailing-backslash continuation lines, backslash escapes).

#include <string>
#include <string_view>

#include "agent/api/config_tree.h"

namespace sluice::config {

FlatConfig parse_properties(std::string_view text, const std::string& file);

// Reads the file; throws ConfigError naming it when it cannot be read.
std::string read_config_file(const std::string& path);

}  // namespace sluice::config
