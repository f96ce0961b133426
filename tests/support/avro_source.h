#pragma once
// Sluice's Avro source in-process on a free loopback port, into a memory channel of its own (the
// Avro source's and the Avro sink's tests).

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "agent/api/component_spec.h"
#include "channels/memory/memory_channel.h"
#include "sources/avro/avro_source.h"
#include "tests/support/component.h"

namespace sluice::test {

struct AvroSource {
  using Properties = std::map<std::string, std::string>;
  MemoryChannel channel;
  std::unique_ptr<Source> source;

  // `capacity`: the channel's, in events.
  explicit AvroSource(Properties properties = {}, size_t capacity = 100000)
      : channel("c", MemoryChannelConfig{capacity, std::min<size_t>(capacity, 1000), {}, 20}) {
    properties.emplace("bind", "127.0.0.1");
    properties.emplace("port", "0");
    properties.emplace("numProcessors", "1");
    SharedState shared;
    BuildContext context{shared};
    source = avro::kAvroSourceSpec.make_source(component(config::Kind::source, "a", "avro", properties), {&channel},
                                               context);
    source->start();
  }
  ~AvroSource() { source->stop(Clock::now() + std::chrono::seconds(5)); }
  uint16_t port() const { return source->listening_ports()[0]; }
};

}  // namespace sluice::test
