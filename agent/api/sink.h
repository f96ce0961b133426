#pragma once
#include <cstdint>
#include <string>

#include "agent/api/channel.h"
#include "agent/api/metrics_writer.h"
#include "agent/api/pipeline_latency.h"

namespace sluice {

// What every sink counts; the agent writes these as the sink families and Flume fields, a
// sink's own metrics come from its probe (write_metrics).
struct SinkCounters {
  uint64_t events_taken = 0;
  uint64_t events_sent = 0;                 // handed over (acks=0) or acknowledged (acks>=1)
  uint64_t events_failed = 0;               // delivery reports with an error (each attempt counts)
  uint64_t events_discarded = 0;            // failed for good (e.g. too large): committed, not retried
  uint64_t events_rolled_back = 0;          // failed and put back into the channel for another attempt
  uint64_t events_possibly_duplicated = 0;  // of those, maybe stored already (sent, answer lost or purged)
  uint64_t events_lost_after_handover = 0;  // acks=0: of events_sent, not delivered after all
  uint64_t events_possibly_lost = 0;        // acks=0: of events_sent, written to a connection that then went down
  int64_t events_queued = 0;                // handed to the sink's client (its Kafka producer), not yet sent
  DurationHistogram batch_seconds;          // take → committed (or rolled back)
  uint64_t batches = 0;
  PipelineLatencies latency;  // of the events committed

  SinkCounters& operator+=(const SinkCounters& c) {
    events_taken += c.events_taken;
    events_sent += c.events_sent;
    events_failed += c.events_failed;
    events_discarded += c.events_discarded;
    events_rolled_back += c.events_rolled_back;
    events_possibly_duplicated += c.events_possibly_duplicated;
    events_lost_after_handover += c.events_lost_after_handover;
    events_possibly_lost += c.events_possibly_lost;
    events_queued += c.events_queued;
    batch_seconds += c.batch_seconds;
    batches += c.batches;
    latency.arrival_to_commit += c.latency.arrival_to_commit;
    latency.channel_wait += c.latency.channel_wait;
    latency.delivery += c.latency.delivery;
    return *this;
  }
};

// Lifecycle: constructed → start() (own thread begins draining its channel) → stop(deadline):
// keeps draining until the channel is empty (sources are stopped by then) or the deadline,
// flushes what it handed to Kafka, then joins. Counters may be read from any thread.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual const std::string& name() const = 0;
  virtual void start() = 0;
  // Begins stopping without waiting: the agent tells every sink first, so that their drains
  // (and their graces for Kafka's answers) run side by side, then stop()s each.
  virtual void request_stop(Deadline) {}
  // The whole agent stops by the deadline (SIGTERM), not a reload: what the sinks share, and what
  // asks on their behalf, may wind down by then too (a Kafka producer's questions). Told to every
  // sink as the stop begins, before the sources stop (which may take until the deadline).
  virtual void agent_stopping(Deadline) {}
  virtual void stop(Deadline deadline) = 0;
  // At a reload that replaces or removes this sink while its channel stays: begins stopping
  // without waiting — it takes nothing more (the channel's other sinks go on) and settles what it
  // took by the deadline (delivered, or back in the channel); stop() then waits for that. The
  // agent tells every retiring sink first, so that their settling runs side by side.
  virtual void retire(Deadline deadline) = 0;
  virtual SinkCounters counters() const = 0;
  // The sink's metrics beyond SinkCounters (the agent writes those); any thread.
  virtual void write_metrics(MetricsWriter&) const {}
  // key=value lines for the agent's --ready-file (e.g. the embedded Kafka's address).
  virtual std::string ready_info() const { return {}; }
  // True if it commits a take only once its destination acknowledged the events (Kafka's
  // delivery reports, acks >= 1): what a source that answers its senders on commit relies on.
  virtual bool commits_after_delivery() const { return false; }
  // How many takes it may hold at once (what a channel reads back from disk for it).
  virtual size_t takes_in_flight() const { return 1; }
  // The most memory the sink (its client) can hold beyond its channel's (memory_bound.h).
  virtual uint64_t memory_bound(const memory::Context& context) const = 0;
};

}  // namespace sluice
