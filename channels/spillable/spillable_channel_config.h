#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "agent/api/property_table.h"
#include "channels/spillable/segment_store.h"

namespace sluice {

struct SpillableChannelConfig {
  int64_t memory_capacity = 0;
  config::ByteSize byte_capacity;  // of the memory part
  int64_t byte_capacity_buffer_percentage = 0;
  int64_t overflow_capacity = 0;
  int64_t transaction_capacity = 0;
  std::string data_dir;
  std::string checkpoint_dir;
  config::ByteSize max_file_size;
  config::ByteSize max_bytes_on_disk;
  config::ByteSize minimum_required_space;
  spill::FsyncPolicy fsync = spill::FsyncPolicy::interval;
  std::chrono::milliseconds fsync_interval{0};
};

extern const config::PropertyTable<SpillableChannelConfig> kSpillableChannelProperties;
// The file channel's: the same, with no memory part by default (memoryCapacity 0, byteCapacity 0).
const config::PropertyTable<SpillableChannelConfig>& file_channel_properties();

// Binds the table (`disk_only`: the file channel, which keeps nothing in memory) and checks
// what it cannot express: a data directory, one only, and a transaction that fits.
SpillableChannelConfig parse_spillable_channel_config(const config::ComponentConfig& component, bool disk_only);

}  // namespace sluice
