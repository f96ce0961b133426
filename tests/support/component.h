#pragma once
// A component's configuration as if read from a file (agent "a", fed by or draining channel
// "c"), for tests that build one component directly.

#include <map>
#include <string>

#include "agent/api/config_tree.h"

namespace sluice::test {

inline config::ComponentConfig component(config::Kind kind, const std::string& name, const std::string& type,
                                         const std::map<std::string, std::string>& properties) {
  config::ComponentConfig c;
  c.kind = kind;
  c.name = name;
  c.key_prefix = "a." + std::string(config::kind_plural(kind)) + "." + name;
  c.type = type;
  c.channels = {"c"};
  for (const auto& [key, value] : properties) c.properties[key] = config::PropertyValue{value, {"test", 1}};
  return c;
}

// A syslog TCP source on 127.0.0.1, a free port, with `properties` on top.
inline config::ComponentConfig syslog_source_component(std::map<std::string, std::string> properties) {
  properties.emplace("host", "127.0.0.1");
  properties.emplace("ports", "0");
  return component(config::Kind::source, "s", "multiport_syslogtcp", properties);
}

}  // namespace sluice::test
