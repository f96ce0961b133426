#pragma once
// One descriptor per component type. Each component's folder declares its specs with
// sluice_component() (cmake/sluice_component.cmake), which generates the registry.
//
// Construction validates everything that can be checked without the outside world, so
// `sluice --check` is simply "construct every component, start none": sockets are bound and
// Kafka is contacted only in start().

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "agent/api/config_tree.h"
#include "agent/api/property_table.h"
#include "agent/api/sink_group.h"

namespace sluice {

class Channel;
class ChannelSelector;
class Interceptor;
class InterceptorChain;
class MetricsWriter;
class Sink;
class Source;

// Objects the components of one agent share, one per type, made by the first that asks (the
// Kafka sinks' embedded cluster and producers). The agent keeps them until every component is
// gone; a component that needs its object later keeps the shared_ptr.
class SharedState {
 public:
  template <class T>
  std::shared_ptr<T> get() {
    std::shared_ptr<void>& slot = objects_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_shared<T>();
    return std::static_pointer_cast<T>(slot);
  }

 private:
  std::map<std::type_index, std::shared_ptr<void>> objects_;
};

// What a component may need from the agent while it is built.
struct BuildContext {
  SharedState& shared;
  // The source's interceptors (<source>.interceptors), or null if it has none: a source applies
  // them to every event it makes (interceptor.h).
  std::shared_ptr<const InterceptorChain> interceptors;
  // The source's channel selector (<source>.selector.*; replicating, all channels required, when
  // it configures none): which of its channels each event goes into (channel_selector.h).
  std::shared_ptr<const ChannelSelector> selector;
  // The sink's group (<agent>.sinkgroups), if it is in one: it asks before each take and tells
  // what became of each (sink_group.h).
  SinkGroupMember sink_group;
};

struct ComponentSpec {
  config::Kind kind;
  std::string_view type;                  // canonical name
  std::vector<std::string_view> aliases;  // Flume's type and class names
  std::string_view doc;
  std::vector<config::PropertyDoc> (*describe)();
  std::unique_ptr<Channel> (*make_channel)(const config::ComponentConfig&) = nullptr;
  std::unique_ptr<Source> (*make_source)(const config::ComponentConfig&, std::vector<Channel*> channels,
                                         BuildContext&) = nullptr;
  std::unique_ptr<Sink> (*make_sink)(const config::ComponentConfig&, Channel& channel, BuildContext&) = nullptr;
  std::unique_ptr<Interceptor> (*make_interceptor)(const config::ComponentConfig&) = nullptr;
  // `component.channels` are the source's channels.
  std::unique_ptr<ChannelSelector> (*make_selector)(const config::ComponentConfig&) = nullptr;
  // `component.channels` are the group's sinks; null: they run as if in no group.
  std::shared_ptr<SinkGroup> (*make_sink_group)(const config::ComponentConfig&) = nullptr;
  // Metrics of the type rather than of one component (e.g. librdkafka's process-wide error
  // count): written once per scrape, whether or not the agent has a component of the type.
  void (*write_type_metrics)(MetricsWriter&) = nullptr;
};

}  // namespace sluice
