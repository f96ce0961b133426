#pragma once
// How long events take through the agent, for a sink to record as it commits a take: from
// arrival (EventStorage::arrived_at, stamped once per batch as its first event is appended) to
// the commit, split into the wait in the channel (arrival → take) and the delivery (take →
// commit: Kafka's acknowledgement with acks >= 1, librdkafka taking the batch with acks = 0).
// Each batch weighs as many observations as it holds events, so the quantiles are events'
// (each counted from its batch's first event: at most the source's batching time early).

#include "agent/api/channel.h"
#include "agent/api/metrics_writer.h"

namespace sluice {

struct PipelineLatencies {
  DurationHistogram arrival_to_commit;
  DurationHistogram channel_wait;  // arrival → take
  DurationHistogram delivery;      // take → commit
};

class PipelineLatency {
 public:
  // `committed` (a take, or the part of one that left the channel) was taken at `taken_at` and
  // committed at `committed_at`. Batches of unknown arrival (replayed after a restart) are left out.
  void committed(const Take& committed, Clock::time_point taken_at, Clock::time_point committed_at = Clock::now()) {
    for (const EventBatch& batch : committed.batches) {
      const Clock::time_point arrived = batch.arrived_at();
      if (arrived == Clock::time_point{} || batch.empty()) continue;
      arrival_to_commit_.observe(committed_at - arrived, batch.size());
      channel_wait_.observe(taken_at - arrived, batch.size());
      delivery_.observe(committed_at - taken_at, batch.size());
    }
  }
  PipelineLatencies snapshot() const {
    return {arrival_to_commit_.snapshot(), channel_wait_.snapshot(), delivery_.snapshot()};
  }

 private:
  AtomicDurationHistogram arrival_to_commit_, channel_wait_, delivery_;
};

}  // namespace sluice
