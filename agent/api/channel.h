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

#include "agent/api/config_tree.h"
#include "agent/api/deadline.h"
#include "agent/api/event_batch.h"
#include "agent/api/memory_bound.h"
#include "agent/api/metrics_writer.h"

namespace sluice {

// Events a sink holds between take and commit/rollback.
struct Take {
  std::vector<EventBatch> batches;
  size_t events = 0;
  uint64_t bytes = 0;
  bool empty() const { return events == 0; }
};

// What every channel counts; a channel's own metrics (a disk's) are written by its probe.
struct ChannelCounters {
  uint64_t events_put = 0;
  uint64_t events_taken = 0;
  uint64_t events_committed = 0;
  uint64_t events_rolled_back = 0;
  uint64_t events_held = 0;  // queued plus taken-but-not-committed
  uint64_t bytes_held = 0;
  std::chrono::nanoseconds put_blocked{0};
  // Channels that keep events across restarts (0 in the others):
  uint64_t events_on_disk = 0;     // of events_held: kept for the next start
  uint64_t events_recovered = 0;   // found at start, replayed
  uint64_t events_unreadable = 0;  // kept, but found unreadable when read back: lost, logged

  ChannelCounters& operator+=(const ChannelCounters& c) {
    events_put += c.events_put;
    events_taken += c.events_taken;
    events_committed += c.events_committed;
    events_rolled_back += c.events_rolled_back;
    events_held += c.events_held;
    bytes_held += c.bytes_held;
    put_blocked += c.put_blocked;
    events_on_disk += c.events_on_disk;
    events_recovered += c.events_recovered;
    events_unreadable += c.events_unreadable;
    return *this;
  }
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

  // True if put() returns only once the batch is written to disk (the file channel): a source
  // that acknowledges its sender on put (RELP's ackAfter = channel) needs such a channel.
  virtual bool puts_reach_disk() const { return false; }
  // True if close() keeps what the channel still holds (on disk) for the next open of a channel
  // on the same storage; a memory channel's contents end with it.
  virtual bool keeps_contents() const { return false; }
  // Where such a channel keeps them (its directories, for messages), so that a reload can tell
  // whether a channel replacing it would find them; empty for the others.
  virtual std::string storage() const { return {}; }
  // The same directories, each made absolute and normal (weakly_canonical), to compare.
  virtual std::vector<std::string> storage_paths() const { return {}; }
  // True if close() could keep `events` more events of `bytes` bytes beside what the channel
  // holds (its disk part's room, in events and bytes): at a stop, no more may be moved into it.
  virtual bool keeps_more(size_t /*events*/, uint64_t /*bytes*/) const { return false; }

  virtual size_t capacity() const = 0;
  // The most events one put can hold, however empty the channel is (a put of more waits for
  // ever): its capacity, or a part of it where a batch must fit in one part.
  virtual size_t largest_put() const { return capacity(); }
  virtual size_t transaction_capacity() const = 0;
  virtual ChannelCounters counters() const = 0;
  // The channel's metrics beyond ChannelCounters (the agent writes those); any thread.
  virtual void write_metrics(MetricsWriter&) const {}
  // The most memory the channel can hold (memory_bound.h), given its sources' largest event and
  // its sinks; memory::kUnbounded if a setting bounds nothing.
  virtual uint64_t memory_bound(const memory::Context& context) const = 0;
};

// A component's batch size against the channel it uses: 0 means the channel's
// transactionCapacity; more than that is a configuration error naming the property.
inline size_t batch_size_for(const config::ComponentConfig& component, std::string_view property, size_t configured,
                             const Channel& channel) {
  if (configured == 0) return channel.transaction_capacity();
  if (configured > channel.transaction_capacity())
    component.fail(property, std::to_string(configured) + " exceeds the transactionCapacity (" +
                                 std::to_string(channel.transaction_capacity()) + ") of channel '" + channel.name() +
                                 "'");
  return configured;
}

}  // namespace sluice
