#pragma once
#include <cstddef>
#include <cstdint>

#include "agent/api/property_table.h"

namespace sluice {

struct MemoryChannelConfig {
  size_t capacity = 0;
  size_t transaction_capacity = 0;
  config::ByteSize byte_capacity;
  int64_t byte_capacity_buffer_percentage = 0;
};

extern const config::PropertyTable<MemoryChannelConfig> kMemoryChannelProperties;

// Binds the table and checks that a transaction fits in the channel.
MemoryChannelConfig parse_memory_channel_config(const config::ComponentConfig& component);

}  // namespace sluice
