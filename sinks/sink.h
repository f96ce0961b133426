#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "channels/channel.h"

namespace sluice {

// Durations in fixed buckets, recorded per batch (never per event).
struct DurationHistogram {
  static constexpr double kBounds[] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10};
  static constexpr size_t kBuckets = sizeof(kBounds) / sizeof(kBounds[0]) + 1;  // the last: +Inf
  uint64_t counts[kBuckets] = {};  // per bucket, not cumulative
  double sum_seconds = 0;
  uint64_t count = 0;
  static size_t bucket_of(double seconds) {
    size_t i = 0;
    while (i + 1 < kBuckets && seconds > kBounds[i]) ++i;
    return i;
  }
};

struct SinkCounters {
  uint64_t events_taken = 0;
  uint64_t events_sent = 0;        // handed over (acks=0) or acknowledged (acks>=1)
  uint64_t events_failed = 0;      // delivery reports with an error (each attempt counts)
  uint64_t events_discarded = 0;   // failed for good (e.g. too large): committed, not retried
  uint64_t events_rolled_back = 0; // failed and put back into the channel for another attempt
  uint64_t events_possibly_duplicated = 0;  // of those, maybe stored already (sent, answer lost or purged)
  uint64_t events_lost_after_handover = 0;  // acks=0: of events_sent, not delivered after all
  uint64_t producer_restarts = 0;  // new producers after fatal errors
  std::vector<std::pair<std::string, uint64_t>> failed_by_reason;  // reason → events (non-zero only)
  DurationHistogram batch_seconds;  // take → committed (or rolled back)
  int64_t queue_messages = 0;       // messages waiting in the sink's Kafka producer
  struct Broker {
    std::string name;
    bool up = false;
    double rtt_avg_seconds = 0, rtt_p99_seconds = 0;
  };
  std::vector<Broker> brokers;      // as the sink's producer last saw them
  uint64_t batches = 0;
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
  virtual void stop(Deadline deadline) = 0;
  virtual SinkCounters counters() const = 0;
};

}  // namespace sluice
