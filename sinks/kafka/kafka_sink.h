#pragma once
// Kafka sink: one thread that takes batches from its channel and produces them through a
// (possibly shared) librdkafka producer, without copying event bytes.
//
//   take(≤ batchSize) ──▶ route ──▶ produce_batch ──▶ acks=0:   commit what librdkafka took; the bytes stay
//        │                │                           alive until its delivery reports (HandedOverTake)
//        │                │                 acks≥1:   up to maxTakesInFlight takes (AwaitedTake) wait
//        │                │                           for their reports; the oldest settles first:
//        │                │                           delivered → commit, failed → classify():
//        │                │                           discard (counted) or rollback (retried)
//        │         │      └─ refused (queue full at the shutdown deadline, retriable): rollback
//        │         └─ partition not served yet (destinations.h): aside (aside_takes.h), sent once it is
//        └── channel empty: poll librdkafka, wait up to 100 ms for the next batch
//
// Nothing is taken while the sink's own destination is not served (a topic being created, a
// cluster not answered yet): its first events never meet a partition its leader does not serve.
// In a sink group that counts as a failed take (the group turns to its other sinks), and there a
// sink with acks=0 commits only once librdkafka has sent a take (its delivery reports), so that
// what it held goes back to the channel for another sink when its cluster does not take it.
// A producer with a fatal error (idempotence) or a stalled partition (stall_watch.h) is replaced
// by a new one once its takes are settled.
// Lifecycle: built (config checked with librdkafka) → start() (producer created, thread
// started) → stop(deadline) (drain the channel until the deadline, purge, flush, count what
// could not be delivered).

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agent/api/component_spec.h"
#include "agent/api/file_watch.h"
#include "agent/api/sink.h"
#include "sinks/kafka/aside_takes.h"
#include "sinks/kafka/destinations.h"
#include "sinks/kafka/kafka_environment.h"
#include "sinks/kafka/kafka_sink_config.h"
#include "sinks/kafka/kafka_sink_probe.h"
#include "sinks/kafka/request_builder.h"

namespace sluice::kafka {

class AwaitedTake;

class KafkaSink final : public Sink {
 public:
  // `group`: the sink group it is in (asked before each take), if any.
  KafkaSink(std::string name, KafkaSinkConfig config, Channel& channel, std::shared_ptr<KafkaEnvironment> env,
            SinkGroupMember group = {});
  ~KafkaSink() override;

  const std::string& name() const override { return name_; }
  void start() override;
  void request_stop(Deadline deadline) override;
  void agent_stopping(Deadline deadline) override;
  void stop(Deadline deadline) override;
  void retire(Deadline deadline) override;
  SinkCounters counters() const override;
  KafkaSinkCounters kafka_counters() const;
  void write_metrics(MetricsWriter& writer) const override;
  std::string ready_info() const override;
  bool commits_after_delivery() const override;
  size_t takes_in_flight() const override { return config_.takes_in_flight; }
  uint64_t memory_bound(const memory::Context& context) const override;

 private:
  void run();
  // Whether the loop takes now, waits (it polled meanwhile), or is done (stopping, nothing left).
  enum class Turn { take, wait, done };
  Turn next_turn();
  void send(Take take);
  // Each message's destination and fate (destinations.h); what waits goes aside, the rest stays
  // in `take` (returned), its messages_ and topics_ in the same order.
  Take route(Take take);
  void send_aside();  // what waits aside and may go now
  void settle_refused_aside(AsideTake entry, int refusal, Clock::time_point now);
  void give_back_aside();  // at a stop: back to the channel, in order
  void unblock_window();   // the window's head waits only for partitions without a leader
  void hand_over(Take take, Clock::time_point taken_at);
  void settle_finished();
  void settle_front();
  void enforce_deadline();
  void settle(const AwaitedTake& awaited);
  // deadLetterTopic (dead_letters.cc): a settled take's messages refused for good go there, and
  // the take waits for those reports (true) before it settles; an aside part refused for good
  // joins the window to go the same way.
  bool send_dead_letters(AwaitedTake& awaited);
  void dead_letter_aside(AsideTake entry, int refusal, Clock::time_point now);
  void roll_back(Take back);
  void roll_back_window();
  void put_back(Take back);  // into the channel's front, counted as rolled back
  void release_stalled_producer();
  void look_at_tls_files();  // sslReloadInterval: changed files mark the producer for replacing
  void use_producer();
  void leave_producer();
  void replace_producer();
  void bound_questions(Producer& producer);
  void bound_current_producer();
  void lengthen_stall_limit();
  void count_failures(const uint64_t (&by_reason)[kDeliveryErrorKinds], const std::string& text, uint64_t discarded,
                      uint64_t rolled_back, uint64_t dead_lettered = 0);

  const std::string name_;
  const KafkaSinkConfig config_;
  Channel& channel_;
  const std::shared_ptr<KafkaEnvironment> env_;  // shared by the agent's Kafka sinks
  const size_t batch_size_;
  ProducerSettings producer_settings_;    // config_.producer with the resolved bootstrap
  std::unique_ptr<FileWatch> tls_files_;  // the producer's ssl.*.location files (null: none, or not watched)
  Clock::time_point next_tls_look_{};
  std::shared_ptr<Producer> producer_;
  std::thread thread_;
  std::atomic<bool> draining_{false};            // stop() was called: end once the channel is empty
  std::atomic<bool> retiring_{false};            // retire() was called: take nothing more
  StopDeadline agent_deadline_;                  // agent_stopping(): the whole agent's stop
  StopDeadline stop_deadline_;                   // ...or at this deadline, whatever is left
  const std::shared_ptr<KafkaSinkProbe> probe_;  // shared with the delivery trackers
  std::vector<Fate> fates_;                      // per message of the take being routed
  std::chrono::milliseconds backoff_{100};       // before retrying a rolled-back take; doubles to 10 s
  Clock::time_point resume_at_{};                // no new take before (the backoff)
  const size_t max_in_flight_;                   // acks >= 1: takes awaiting their reports at once
  const SinkGroupMember group_;                  // its sink group, if any: asked before each take
  std::deque<AwaitedTake*> window_;              // those takes, oldest first; each settled in order
  // What settled takes of the window failed to deliver, oldest first: rolled back together once
  // the window is empty, so the channel gets them back in the order they were taken.
  std::vector<Take> window_back_;
  Clock::time_point in_flight_at_{}, give_up_at_{};   // past the stop deadline: when to purge in flight, give up
  std::chrono::milliseconds producer_backoff_{1000};  // between new producers after fatal errors
  std::chrono::milliseconds stall_limit_;             // the next producer's stall watch (lengthen_stall_limit)
  Clock::time_point last_stall_at_{};                 // when a stalled producer was last replaced
  Clock::time_point next_producer_at_{};
  Destinations destinations_;                         // where messages go, and whether it is served
  RequestBuilder request_{config_, destinations_};    // the take being sent, made messages
  AsideTakes aside_;                                  // taken, waiting for their partition
  Clock::time_point last_unblock_{};                  // unblock_window(): at most once a second
  const AwaitedTake* last_unblocked_head_ = nullptr;  // (compared only, never followed)
  Clock::time_point not_served_since_{};              // the own destination is not served since (or {})
};

extern const ComponentSpec kKafkaSinkSpec;

}  // namespace sluice::kafka
