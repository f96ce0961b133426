#pragma once
// The spillable channel (Flume's `spillablememory`; `file` keeps nothing in memory): a FIFO of
// batches, each either in memory or a record on disk. Puts go to memory while it has room
// (memoryCapacity events), then to disk (SegmentStore: Snappy, length + CRC-32C), then wait
// (backpressure); order is kept across both because the queue holds both kinds in put order.
//
// A record on disk stays until every one of its events is committed by a sink (any slices,
// any sinks, after any rollbacks): a CommitTracker on the batch read back from disk counts
// them and releases the record. After a crash, the records not released are replayed at the
// next start. What was in memory is lost by a crash (as in Flume) but not by a clean stop:
// close() writes it to disk.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "agent/api/channel.h"
#include "agent/api/component_spec.h"
#include "agent/api/log_limiter.h"
#include "channels/spillable/segment_store.h"
#include "channels/spillable/spillable_channel_config.h"

namespace sluice {

// What only a disk-backed channel counts (ChannelCounters has the rest).
struct SpillCounters {
  uint64_t events_spilled = 0;  // put to disk because memory was full
  uint64_t bytes_on_disk = 0;   // segment files and commit log
  uint64_t corrupt_tails = 0;   // segments cut at a torn or corrupt record (at start)
  uint64_t corrupt_bytes = 0;
  uint64_t disk_write_errors = 0;  // commit log writes and fsyncs that failed: logged; may redeliver
};

class SpillableChannel final : public Channel {
 public:
  SpillableChannel(config::ComponentConfig component, SpillableChannelConfig config);
  ~SpillableChannel() override;

  const std::string& name() const override { return component_.name; }
  void open() override;
  void close() override;
  bool put(EventBatch& batch, Deadline deadline) override;
  Take take(size_t max_events, Deadline deadline) override;
  void commit(const Take& take) override;
  void rollback(Take&& take) override;
  size_t capacity() const override;
  // A batch goes whole into memory or whole onto disk.
  size_t largest_put() const override {
    return static_cast<size_t>(std::max(config_.memory_capacity, config_.overflow_capacity));
  }
  bool puts_reach_disk() const override { return config_.memory_capacity == 0; }
  bool keeps_contents() const override { return true; }  // close() writes what is in memory to disk
  std::string storage() const override { return config_.checkpoint_dir + " " + config_.data_dir; }
  std::vector<std::string> storage_paths() const override;
  bool keeps_more(size_t events, uint64_t bytes) const override;
  size_t transaction_capacity() const override { return static_cast<size_t>(config_.transaction_capacity); }
  ChannelCounters counters() const override;
  uint64_t memory_bound(const memory::Context& context) const override;
  SpillCounters spill_counters() const;
  void write_metrics(MetricsWriter& writer) const override;

 private:
  struct Entry {
    EventBatch batch;                      // in memory (also a rolled-back slice of a disk record)
    std::optional<spill::RecordRef> disk;  // or on disk, not yet read
    BatchOrigin origin;                    // on disk: the source's acknowledger and arrival, for the batch read back
    size_t events() const { return disk ? disk->events : batch.size(); }
  };
  class RecordTracker;

  // memoryCapacity and the memory part's byte bound (byteCapacity).
  bool memory_has_room(size_t events, uint64_t bytes) const;
  // Why the disk cannot take `stored` more bytes now, or nullptr.
  const char* disk_refusal(size_t events, uint64_t stored) const;
  // Reads and decodes; empty if corrupt.
  EventBatch load(const spill::RecordRef& record, BatchOrigin origin);
  // With mutex_ held: `events` of the record were committed, its last ones; or a part of it.
  void release(const spill::RecordRef& record, size_t events);
  void release_part(const spill::RecordRef& record, spill::EventRange part);
  void queue_partly_committed(const spill::ReplayRecord& record);
  void drop_unreadable(const spill::RecordRef& record, uint64_t events);
  void log_blocked(const char* reason);

  const config::ComponentConfig component_;
  const SpillableChannelConfig config_;
  const uint64_t memory_byte_capacity_ = 0;     // 0: memoryCapacity alone bounds the memory part
  std::unique_ptr<spill::SegmentStore> store_;  // from open() to close()
  uint64_t bytes_on_disk_at_close_ = 0, disk_write_errors_at_close_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<Entry> queue_;
  uint64_t memory_events_ = 0;  // held in memory: queued plus taken, not from disk
  uint64_t memory_bytes_ = 0;
  uint64_t disk_events_ = 0;  // in records not yet released (queued, taken, rolled back)
  ChannelCounters counters_;
  SpillCounters spill_counters_;
  LogLimiter blocked_log_;  // "memory full and ...": a line per 10 s

  std::thread flusher_;  // fsync = interval
  bool stopping_ = false;
  std::condition_variable flusher_wake_;
};

extern const ComponentSpec kSpillableChannelSpec;
extern const ComponentSpec kFileChannelSpec;

}  // namespace sluice
