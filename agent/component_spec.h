#pragma once
// One descriptor per component type. agent/component_registry.cc lists them all by hand
// (self-registering statics get dropped by the linker).
//
// Construction validates everything that can be checked without the outside world, so
// `sluice --check` is simply "construct every component, start none": sockets are bound and
// Kafka is contacted only in start().

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/config/config_tree.h"
#include "agent/config/property_table.h"
#include "channels/channel.h"
#include "sinks/sink.h"
#include "sources/source.h"

namespace sluice {

namespace kafka {
class KafkaEnvironment;
}

// What a component may need from the agent while it is built.
struct BuildContext {
  kafka::KafkaEnvironment* kafka = nullptr;
};

struct ComponentSpec {
  config::Kind kind;
  std::string_view type;                   // canonical name
  std::vector<std::string_view> aliases;   // Flume's type and class names
  std::string_view doc;
  std::vector<config::PropertyDoc> (*describe)();
  std::unique_ptr<Channel> (*make_channel)(const config::ComponentConfig&) = nullptr;
  std::unique_ptr<Source> (*make_source)(const config::ComponentConfig&,
                                         std::vector<Channel*> channels, BuildContext&) = nullptr;
  std::unique_ptr<Sink> (*make_sink)(const config::ComponentConfig&, Channel& channel,
                                     BuildContext&) = nullptr;
};

// A component's batch size against the channel it uses: 0 means the channel's
// transactionCapacity; more than that is a configuration error naming the property.
inline size_t batch_size_for(const config::ComponentConfig& component, std::string_view property,
                             int64_t configured, const Channel& channel) {
  if (configured == 0) return channel.transaction_capacity();
  if (static_cast<size_t>(configured) > channel.transaction_capacity())
    component.fail(property, std::to_string(configured) + " exceeds the transactionCapacity (" +
                                 std::to_string(channel.transaction_capacity()) + ") of channel '" + channel.name() + "'");
  return static_cast<size_t>(configured);
}

}  // namespace sluice
