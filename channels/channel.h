#pragma once
// The bounded buffer between sources and sinks. Transactions are per batch:
//
//   source thread                 channel                     sink thread
//   put(batch) ── blocks while ──▶ [b1][b2][b3] ── take(n) ──▶ Take{b1,b2'} ──▶ Kafka
//                 full (TCP           ▲                          │
//                 backpressure)       └──── rollback(take) ◀─────┤ failed
//                                     capacity freed ◀ commit ◀──┘ delivered / handed over
//
// Events of a take still count against capacity until commit, as in Flume.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/deadline.h"
#include "channels/event_batch.h"

namespace sluice {

// Events a sink holds between take and commit/rollback.
struct Take {
  std::vector<EventBatch> batches;
  size_t events = 0;
  uint64_t bytes = 0;
  bool empty() const { return events == 0; }
};

struct ChannelCounters {
  uint64_t events_put = 0;
  uint64_t events_taken = 0;
  uint64_t events_committed = 0;
  uint64_t events_rolled_back = 0;
  uint64_t events_held = 0;  // queued plus taken-but-not-committed
  uint64_t bytes_held = 0;
  std::chrono::nanoseconds put_blocked{0};
  // Disk-backed channels only (has_disk):
  bool has_disk = false;
  uint64_t events_on_disk = 0;     // of events_held: in records on disk, kept across restarts
  uint64_t bytes_on_disk = 0;      // segment files and commit log
  uint64_t events_spilled = 0;     // put to disk because memory was full
  uint64_t events_recovered = 0;   // found on disk at start, replayed
  uint64_t corrupt_tails = 0;      // segments cut at a torn or corrupt record (at start)
  uint64_t corrupt_bytes = 0;
  uint64_t events_unreadable = 0;  // records whose CRC failed when read back: lost, logged
  uint64_t disk_write_errors = 0;  // commit log writes and fsyncs that failed: logged; may redeliver
};

class Channel {
 public:
  virtual ~Channel() = default;
  // Before any sink or source starts: a disk-backed channel locks its directory and recovers
  // what it holds (throws config::ConfigError naming the property). after every sink stopped:
  // close() keeps what is still held, if the channel can.
  virtual void open() {}
  virtual void close() {}
  virtual const std::string& name() const = 0;

  // All events of `batch` or none: false when the deadline passed first (batch untouched).
  virtual bool put(EventBatch& batch, Deadline deadline) = 0;
  // Up to max_events, waiting until at least one is there or the deadline passes.
  virtual Take take(size_t max_events, Deadline deadline) = 0;
  virtual void commit(const Take& take) = 0;
  // Puts the events back at the front, in their order, for the next take.
  virtual void rollback(Take&& take) = 0;

  virtual size_t capacity() const = 0;
  virtual size_t transaction_capacity() const = 0;
  virtual ChannelCounters counters() const = 0;
};

}  // namespace sluice
