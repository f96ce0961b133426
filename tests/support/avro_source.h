#pragma once
// Sluice's Avro source in-process on a free loopback port, into a memory channel of its own (the
// Avro source's and the Avro sink's tests).

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
  MemoryChannel channel{"c", MemoryChannelConfig{100000, 1000, {}, 20}};
  std::unique_ptr<Source> source;

  explicit AvroSource(Properties properties = {}) {
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
