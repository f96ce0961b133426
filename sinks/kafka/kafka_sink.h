#pragma once
// Kafka sink: one thread that takes batches from its channel and produces them through a
// (possibly shared) librdkafka producer, without copying event bytes.
//
//   take(≤ batchSize) ──▶ produce_batch ──▶ acks=0:   commit now; the bytes stay alive until
//        │                                            the delivery reports (InFlightTake)
//        │                                  acks≥1:   poll until every report arrived:
//        │                                            all ok → commit, any failed → rollback
//        └── channel empty: poll librdkafka, wait up to 100 ms for the next batch
//
// Lifecycle: built (config checked with librdkafka) → start() (producer created, thread
// started) → stop(deadline) (drain the channel, flush, count what could not be delivered).

#include <array>
#include <atomic>
#include <string_view>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/component_spec.h"
#include "sinks/kafka/kafka_environment.h"
#include "sinks/kafka/kafka_sink_config.h"

namespace sluice::kafka {

class AwaitedTake;

class KafkaSink final : public Sink {
 public:
  KafkaSink(std::string name, KafkaSinkConfig config, Channel& channel, KafkaEnvironment& env);
  ~KafkaSink() override;

  const std::string& name() const override { return name_; }
  void start() override;
  void stop(Deadline deadline) override;
  SinkCounters counters() const override;

  struct Counters;  // atomics, defined in the .cc

 private:
  void run();
  void send(Take take);
  void settle(AwaitedTake& awaited);
  void add_message(const EventBatch& batch, const EventRecord& e, DeliveryTracker* tracker);
  void produce_messages();
  bool past_deadline() const;

  const std::string name_;
  const KafkaSinkConfig config_;
  Channel& channel_;
  KafkaEnvironment& env_;
  const size_t batch_size_;
  std::shared_ptr<Producer> producer_;
  std::thread thread_;
  std::atomic<bool> draining_{false};
  bool give_up_ = false;  // set once the drain deadline has passed
  Deadline drain_deadline_ = Deadline::max();
  std::shared_ptr<Counters> counters_;
  std::vector<OutgoingMessage> messages_;  // reused for every take
  std::string json_;                       // format json: the take's payloads, copied by librdkafka
  std::vector<std::array<char, 24>> key_scratch_;  // numeric keys, formatted
  std::vector<std::string_view> topics_;          // per-event topics, when topicHeader applies
  std::chrono::milliseconds backoff_{100};  // before retrying a rolled-back take; doubles to 10 s
};

extern const ComponentSpec kKafkaSinkSpec;

}  // namespace sluice::kafka
