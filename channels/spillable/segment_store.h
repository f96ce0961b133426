#pragma once
// The disk half of a spillable channel: append-only segment files of records, each record a
// compressed batch framed by a header with its length, event count and CRC-32C.
//
//   segment-0000000000000007.sls:  "SLUICESG" layout(u32) 0(u32)
//                                   record: 'SREC'(u32) payload length(u32) events(u32) crc32c(u32) payload
//   commits.v2.log:                 "SLUICECL" 2(u32) 0(u32), then per commit:
//                                   segment(u64) record offset(u64) first event(u32) events(u32)
//                                   (events 0: the whole record was delivered downstream)
//   lock:                           flock()ed by the agent that owns the directory; holds its pid
//
// A record stays until released (every event of it committed downstream); the release is
// logged, and a segment whose records are all released is deleted. A part of a record that was
// committed on its own (a take smaller than the record, a partial failure rolled back) is
// logged too, so that a restart replays only the rest: what was delivered is not delivered
// again. On open, every segment is read through: records that are not in the commit log are
// returned for replay, in order, with the parts already committed; a torn or corrupt tail (bad
// header, short payload, CRC mismatch) is cut off and reported. A commit log of the first
// layout (commits.log: 16-byte entries, no header) is read, rewritten in this one, and removed.
//
// A write to the commit log that fails (disk full, I/O error) is logged and counted
// (write_errors) but changes nothing else: the record is delivered again after a restart (at
// least once). Thread-safe; read() holds the lock only to find the file, so reads run in
// parallel.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/api/log_limiter.h"

namespace sluice::spill {

enum class FsyncPolicy { every_batch, interval, never };

struct SegmentStoreConfig {
  std::filesystem::path data_dir;
  std::filesystem::path checkpoint_dir;  // the lock and the commit log
  uint64_t max_file_size = 64 << 20;
  FsyncPolicy fsync = FsyncPolicy::interval;
};

struct RecordRef {
  uint64_t segment = 0;
  uint64_t offset = 0;  // of the record's header in its segment
  uint32_t stored = 0;  // header + payload bytes
  uint32_t events = 0;
};

// Events [first, first + count) of a record.
struct EventRange {
  uint32_t first = 0;
  uint32_t count = 0;
  bool operator==(const EventRange&) const = default;
};

// A record to deliver after a restart, and the parts of it that were delivered already.
struct ReplayRecord {
  RecordRef record;
  std::vector<EventRange> committed;  // sorted by first, not overlapping; empty: none
};

struct RecoveryReport {
  uint64_t segments = 0;          // found on disk
  uint64_t records_replayed = 0;  // not yet delivered: returned for replay
  uint64_t events_replayed = 0;
  uint64_t records_committed = 0;     // delivered before the stop: skipped
  uint64_t corrupt_tails = 0;         // segments cut at a torn or corrupt record
  uint64_t corrupt_bytes = 0;         // bytes cut off
  std::vector<std::string> problems;  // one line per cut, for the log
};

class SegmentStore {
 public:
  static constexpr size_t kRecordHeader = 16;

  // Creates the directories if needed, takes the lock (throws std::runtime_error naming the
  // pid that holds it) and reads every segment; `replay` gets the records to deliver, oldest
  // first.
  SegmentStore(SegmentStoreConfig config, uint32_t layout_version, RecoveryReport& report,
               std::vector<ReplayRecord>& replay);
  ~SegmentStore();
  SegmentStore(const SegmentStore&) = delete;
  SegmentStore& operator=(const SegmentStore&) = delete;

  // Writes one record; throws std::runtime_error on a write error (disk full, I/O error).
  RecordRef append(std::string_view payload, uint32_t events);
  // The payload of a record, or nullopt when what is on disk no longer matches its CRC.
  std::optional<std::string> read(const RecordRef& record) const;
  // Every event of the record was delivered: log it, and delete its segment once all are.
  void release(const RecordRef& record);
  // Events of the record were delivered on their own (the rest not yet): log them.
  void release_part(const RecordRef& record, EventRange part);
  // Flushes written segments and the commit log to the device (fsync = interval calls this).
  void sync();

  // Commit log writes and fsyncs that failed (each logged).
  uint64_t write_errors() const { return write_errors_.load(std::memory_order_relaxed); }

  uint64_t bytes_on_disk() const { return bytes_on_disk_.load(std::memory_order_relaxed); }
  // Free bytes on the file system of the data directory.
  uint64_t free_space() const;

 private:
  struct LogEntry {
    uint64_t offset = 0;  // the record's
    EventRange part;      // count 0: the whole record
  };
  struct Segment {
    int fd = -1;
    uint64_t size = 0;
    uint64_t records = 0;
    uint64_t released = 0;
    std::vector<LogEntry> log;  // what the commit log says of it, for rewriting the log
    uint64_t parts = 0;         // of log: entries for parts of records
    bool dirty = false;
  };
  using CommitLogContents = std::map<uint64_t, std::map<uint64_t, std::vector<EventRange>>>;  // segment, offset

  std::filesystem::path segment_path(uint64_t id) const;
  void lock_directory();
  CommitLogContents read_commit_log(RecoveryReport& report);
  void recover(uint64_t id, const CommitLogContents& committed, RecoveryReport& report,
               std::vector<ReplayRecord>& replay);
  void open_new_segment();
  void delete_segment(uint64_t id);
  // Appends one entry; false (logged, counted) if the write failed.
  bool log_commit(uint64_t segment, const LogEntry& entry);
  // Writes the entries of the segments still on disk to a new log and renames it over the old.
  void rewrite_commit_log();
  void sync_directory() const;
  void write_error(const std::string& what);

  const SegmentStoreConfig config_;
  mutable std::mutex mutex_;  // guards everything below
  const uint32_t layout_version_;
  int lock_fd_ = -1;
  int log_fd_ = -1;
  bool log_dirty_ = false;
  uint64_t log_entries_ = 0;
  std::map<uint64_t, Segment> segments_;
  uint64_t active_ = 0;  // the segment appended to; 0 before the first append
  uint64_t next_id_ = 1;
  std::atomic<uint64_t> bytes_on_disk_{0};
  std::atomic<uint64_t> write_errors_{0};
  LogLimiter write_error_log_;
};

}  // namespace sluice::spill
