#pragma once
// type = avro (Flume's org.apache.flume.sink.AvroSink): takes batch-size events from its channel
// and sends them to a collector's Avro source in one appendBatch call (avro_client.h); the take is
// committed only when the collector answers OK, and rolled back into the channel otherwise (a
// refusal, no connection, no answer in request-timeout), the connection then closed and made
// again for the next try. Outside a sink group it waits 1 s, 2 s, ... 5 s between failed tries
// (Flume's sink runner's backoff); in a failover or load_balance group the group sets it aside.
//
// An event goes as Flume's event: its headers (every header Flume's would carry, event_fields.h)
// and its body.

#include <array>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "agent/api/component_spec.h"
#include "agent/api/log_limiter.h"
#include "agent/api/sink.h"
#include "sinks/avro/avro_client.h"
#include "sinks/avro/avro_sink_config.h"

namespace sluice::avro {

class AvroSink final : public Sink {
 public:
  // Throws config::ConfigError when a TLS file cannot be read.
  AvroSink(const config::ComponentConfig& component, const AvroSinkConfig& config, size_t batch_size, Channel& channel,
           SinkGroupMember group);
  ~AvroSink() override;
  const std::string& name() const override { return name_; }
  void start() override;
  void stop(Deadline deadline) override;
  void retire(Deadline deadline) override;
  SinkCounters counters() const override;
  void write_metrics(MetricsWriter& writer) const override;
  bool commits_after_delivery() const override { return true; }
  uint64_t memory_bound(const memory::Context& context) const override;
  // Connections made to the collector so far (any thread).
  uint64_t connections_made() const { return connections_.load(std::memory_order_relaxed); }
  // Calls so far that ended so (any thread).
  uint64_t calls(CallOutcome outcome) const {
    return calls_[static_cast<size_t>(outcome)].load(std::memory_order_relaxed);
  }

 private:
  void run();
  // One take sent; true if the collector answered OK (committed), false if it was rolled back.
  bool send(Take take);
  void encode(const Take& take);
  // After a failed try outside a group: waits 1 s per consecutive failure (5 s at most), or until
  // the stop's deadline or a retirement.
  void back_off(size_t failures);

  const std::string name_;
  const AvroSinkConfig config_;
  const size_t batch_size_;
  Channel& channel_;
  const SinkGroupMember group_;
  StopDeadline stop_deadline_;  // stop()'s or retire()'s: calls end by it
  AvroClient client_;
  std::string encoded_;  // the take's events, reused
  std::thread thread_;
  std::atomic<bool> draining_{false};
  std::atomic<bool> retiring_{false};
  std::mutex wake_mutex_;
  std::condition_variable wake_;  // ends a backoff at a stop
  std::atomic<uint64_t> taken_{0}, sent_{0}, rolled_back_{0}, possibly_duplicated_{0}, batches_{0};
  std::array<std::atomic<uint64_t>, 4> calls_{};  // by CallOutcome
  std::atomic<uint64_t> connections_{0};
  std::atomic<bool> connected_{false};
  AtomicDurationHistogram batch_seconds_;
  PipelineLatency latency_;
  LogLimiter failure_log_;
};

extern const ComponentSpec kAvroSinkSpec;

}  // namespace sluice::avro
