#include "channels/memory/memory_channel_config.h"

#include "channels/byte_capacity.h"

namespace sluice {

using MC = MemoryChannelConfig;
// A table, one row per property, laid out for reading rather than by clang-format.
// clang-format off
const config::PropertyTable<MC> kMemoryChannelProperties{
    {"capacity", &MC::capacity, "10000",
     "Max events held (queued plus taken but not yet committed by a sink).", {.min = 1, .max = 1'000'000'000}},
    {"transactionCapacity", &MC::transaction_capacity, "1000",
     "Max events one put or take moves; a source's batchSize and a sink's batchSize must not exceed it.",
     {.min = 1, .max = 1'000'000'000}},
    byte_capacity_property<MC>(),
    byte_capacity_buffer_property<MC>(),
};
// clang-format on

MemoryChannelConfig parse_memory_channel_config(const config::ComponentConfig& component) {
  MemoryChannelConfig c = config::bind(kMemoryChannelProperties, component);
  if (c.transaction_capacity > c.capacity)
    component.fail("transactionCapacity", std::to_string(c.transaction_capacity) + " exceeds capacity " +
                                              std::to_string(c.capacity) + ": a transaction must fit in the channel");
  return c;
}

}  // namespace sluice
