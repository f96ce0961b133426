#include "channels/spillable/spillable_channel_config.h"

#include "channels/byte_capacity.h"

namespace sluice {

using SC = SpillableChannelConfig;
// A table, one row per property, laid out for reading rather than by clang-format.
// clang-format off
const config::PropertyTable<SC> kSpillableChannelProperties{
    {"memoryCapacity", &SC::memory_capacity, "10000",
     "Events held in memory (queued plus taken); beyond it batches go to disk. Must be 0 for type file.",
     {.min = 0, .max = 1'000'000'000}},
    byte_capacity_property<SC>(),
    byte_capacity_buffer_property<SC>(),
    {"overflowCapacity", &SC::overflow_capacity, "100000000",
     "Events held on disk (in records not yet delivered); beyond it, and beyond memory, puts wait: backpressure.",
     {.min = 0, .max = 1'000'000'000'000}, {}, {"capacity"}},
    {"transactionCapacity", &SC::transaction_capacity, "10000",
     "Max events one put or take moves; a source's batchSize and a sink's batchSize must not exceed it.",
     {.min = 1, .max = 1'000'000}},
    {"dataDir", &SC::data_dir, "",
     "Directory of the segment files (one; Flume's dataDirs is accepted with a single directory). Required.", {}, {},
     {"dataDirs"}},
    {"checkpointDir", &SC::checkpoint_dir, "",
     "Directory of the lock file and the commit log; empty: dataDir. One agent per directory (flock)."},
    {"maxFileSize", &SC::max_file_size, "64m",
     "Size at which a segment file is closed and a new one started; a segment is deleted once all its events are "
     "delivered, so smaller files give disk space back sooner.",
     {.min = 1 << 16, .max = 1LL << 40}},
    {"maxBytesOnDisk", &SC::max_bytes_on_disk, "16g",
     "Bytes the segment files may take; beyond it puts wait (backpressure); one record may exceed it when the disk "
     "holds none. 0: no bound but overflowCapacity and minimumRequiredSpace.",
     {.min = 0}},
    {"minimumRequiredSpace", &SC::minimum_required_space, "500m",
     "Free space left on the data directory's file system: below it puts wait rather than fill the disk (Flume's).",
     {.min = 0}},
    {"fsync",
     config::one_of(&SC::fsync, {{"batch", spill::FsyncPolicy::every_batch}, {"interval", spill::FsyncPolicy::interval},
                         {"never", spill::FsyncPolicy::never}}),
     "interval",
     "When written records reach the device: batch (each record before its put returns: survives power loss, "
     "slowest), interval (every fsyncInterval: a power loss may lose that much), never (the kernel decides). A "
     "killed agent loses nothing written under any policy: the page cache outlives the process."},
    {"fsyncInterval", &SC::fsync_interval, "1s", "With fsync = interval: how often.", {.min = 1}},
};
// clang-format on

const config::PropertyTable<SpillableChannelConfig>& file_channel_properties() {
  static const auto table =
      config::adapted(kSpillableChannelProperties, {{"memoryCapacity", "0"}, {"byteCapacity", "0"}});
  return table;
}

SpillableChannelConfig parse_spillable_channel_config(const config::ComponentConfig& component, bool disk_only) {
  SpillableChannelConfig c =
      config::bind(disk_only ? file_channel_properties() : kSpillableChannelProperties, component);
  if (disk_only) {
    if (component.properties.count("memoryCapacity") && c.memory_capacity != 0)
      component.fail("memoryCapacity", "a file channel keeps nothing in memory: use type spillablememory");
    if (component.properties.count("byteCapacity") && c.byte_capacity.bytes != 0)
      component.fail("byteCapacity", "a file channel keeps nothing in memory: use type spillablememory");
  }
  if (c.data_dir.empty()) component.fail("dataDir", "is missing: the directory the channel spills to");
  if (c.data_dir.find(',') != std::string::npos)
    component.fail("dataDir", "\"" + c.data_dir + "\": one directory (several data directories are not supported)");
  if (c.checkpoint_dir.empty()) c.checkpoint_dir = c.data_dir;
  if (c.memory_capacity + c.overflow_capacity < c.transaction_capacity)
    component.fail("transactionCapacity", std::to_string(c.transaction_capacity) +
                                              " exceeds memoryCapacity + overflowCapacity: a transaction must fit");
  return c;
}

}  // namespace sluice
