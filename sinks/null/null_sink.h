#pragma once
// Null sink: takes batches and commits them, discarding the events. For benchmarks (the
// agent's own cost without Kafka's) and for pipelines under test.

#include <atomic>
#include <thread>

#include "agent/api/component_spec.h"
#include "agent/api/sink.h"

namespace sluice {

class NullSink final : public Sink {
 public:
  // `group`: the sink group it is in (asked before each take), if any.
  NullSink(std::string name, size_t batch_size, Channel& channel, SinkGroupMember group = {});
  ~NullSink() override;
  const std::string& name() const override { return name_; }
  void start() override;
  void stop(Deadline deadline) override;
  void retire(Deadline deadline) override;
  SinkCounters counters() const override;
  uint64_t memory_bound(const memory::Context&) const override { return 0; }  // it holds nothing

 private:
  const std::string name_;
  const size_t batch_size_;
  Channel& channel_;
  const SinkGroupMember group_;
  std::thread thread_;
  std::atomic<bool> draining_{false};
  std::atomic<bool> retiring_{false};  // a reload replaced it: it ends after the take in hand
  // Written before draining_ is set (stop() once, never after retire()), read after it is seen.
  Deadline deadline_ = Deadline::max();
  std::atomic<uint64_t> events_{0}, batches_{0};
  PipelineLatency latency_;
};

extern const ComponentSpec kNullSinkSpec;

}  // namespace sluice
