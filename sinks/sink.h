#pragma once
#include <cstdint>
#include <string>

#include "channels/channel.h"

namespace sluice {

struct SinkCounters {
  uint64_t events_taken = 0;
  uint64_t events_sent = 0;        // handed over (acks=0) or acknowledged (acks>=1)
  uint64_t events_failed = 0;      // delivery reports with an error (each attempt counts)
  uint64_t events_discarded = 0;   // failed for good (e.g. too large): committed, not retried
  uint64_t events_rolled_back = 0; // failed and put back into the channel for another attempt
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
  virtual void stop(Deadline deadline) = 0;
  virtual SinkCounters counters() const = 0;
};

}  // namespace sluice
