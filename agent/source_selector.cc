#include "agent/source_selector.h"

#include <algorithm>

#include "agent/component_registry.h"

namespace sluice {

std::shared_ptr<const ChannelSelector> take_selector(config::ComponentConfig& source) {
  constexpr std::string_view kPrefix = "selector.";
  config::ComponentConfig selector;
  selector.kind = config::Kind::selector;
  selector.name = source.name;
  selector.key_prefix = source.key_prefix + ".selector";
  selector.type = "replicating";  // Flume's default
  selector.type_where = source.type_where;
  selector.channels = source.channels;
  selector.channels_where = source.channels_where;
  for (const auto& [key, value] : source.properties) {
    if (!key.starts_with(kPrefix)) continue;
    const std::string property = key.substr(kPrefix.size());
    if (property == "type") {
      selector.type = value.value;
      selector.type_where = value.where;
    } else {
      selector.properties[property] = value;
    }
  }
  std::erase_if(source.properties, [&](const auto& entry) { return entry.first.starts_with(kPrefix); });
  selector.type = config::flume_type(selector.type);
  const ComponentSpec* spec = nullptr;
  try {
    spec = &find_component(selector);
  } catch (const config::ConfigError& e) {
    throw config::ConfigError(std::string(e.what()) +
                              "; custom selector classes are not supported: Sluice runs no Java");
  }
  return spec->make_selector(selector);
}

}  // namespace sluice
