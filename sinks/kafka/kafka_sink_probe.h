#pragma once
// What a Kafka sink counts and logs, and the metrics it writes: each outcome is one call that
// bumps its counters and writes its (rate-limited) log line. Shared with the delivery trackers,
// whose reports may come on librdkafka's threads after the sink is gone.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/api/log_limiter.h"
#include "agent/api/metrics_writer.h"
#include "agent/api/sink.h"
#include "sinks/kafka/delivery_outcome.h"
#include "sinks/kafka/producer.h"
#include "sinks/kafka/recent_writes.h"

namespace sluice::kafka {

// Why a topic an event named was not used (destinations.h): a fixed set, a counter's label.
enum class Retopicked : uint8_t { not_allowed, max_topics };
inline constexpr int kRetopickedKinds = 2;

// The Kafka sink's counters beyond every sink's.
struct KafkaSinkCounters {
  bool destination_served = false;  // the sink's own destination was served when it last looked
  uint64_t unserved_looks = 0;      // times it looked (before a take) and found it not served
  uint64_t event_topics = 0;        // topics named by events that it keeps (maxTopics bounds them)
  uint64_t topic_handles = 0;       // topic handles its producer holds (its own and the events')
  uint64_t producer_restarts = 0;   // new producers after fatal errors
  std::vector<std::pair<std::string, uint64_t>> failed_by_reason;  // reason → events (non-zero only)
  uint64_t dead_lettered = 0;                                      // refused for good, taken by the dead-letter topic
  int64_t dead_letters_waiting = 0;  // handed to the dead-letter topic, their round not settled yet
};

class KafkaSinkProbe final : public ConnectionWatcher {
 public:
  explicit KafkaSinkProbe(std::string sink_name) : sink_name_(std::move(sink_name)) {}

  void taken(uint64_t events) { taken_.fetch_add(events, std::memory_order_relaxed); }
  void sent(uint64_t events) { sent_.fetch_add(events, std::memory_order_relaxed); }
  void discarded(uint64_t events) { discarded_.fetch_add(events, std::memory_order_relaxed); }
  // Refused for good (`reason`), taken by the dead-letter topic instead: counted (also as sent), logged.
  void dead_lettered(DeliveryError reason, uint64_t events, const std::string& topic);
  // A dead-letter round of `letters` began (positive) or settled (negative).
  void dead_letters_waiting(int64_t letters) { dead_letters_waiting_.fetch_add(letters, std::memory_order_relaxed); }
  // sslReloadInterval: the producer's TLS files changed (seen), a new producer uses them (applied),
  // or they did not load (refused, with librdkafka's reason).
  void tls_files_changed(const std::string& files);
  void tls_reloaded(bool applied, const std::string& error = "");
  void rolled_back(uint64_t events) { rolled_back_.fetch_add(events, std::memory_order_relaxed); }
  // A take settled (committed or rolled back) `took` after it was taken.
  void batch_done(std::chrono::nanoseconds took);
  // What of a take taken at `taken_at` was committed just now.
  void committed(const Take& committed, Clock::time_point taken_at) { latency_.committed(committed, taken_at); }
  // `count` events of one reason were not delivered: counted, and one line says what follows.
  void failed(DeliveryError reason, uint64_t count, const std::string& text, std::string_view consequence);
  // acks=0: handed over (counted as sent), then failed: lost.
  void lost_after_handover(DeliveryError reason, uint64_t count, const std::string& text);
  // acks=0: a message written to `broker` (delivered, as librdkafka says of acks=0); and a
  // connection to it that went down: what was written to it in the second before is possibly lost.
  void written(int32_t broker, int64_t tick) { writes_.written(broker, tick); }
  void connection_lost(int32_t broker, int64_t tick) override;
  // Going back to the channel although the broker may have them: a retry may duplicate them.
  void possibly_duplicated(uint64_t events);
  // A new producer replaced one with a fatal error.
  void producer_replaced(const std::string& reason);
  // Events whose kafka.topic %{header} they lacked (an empty string in its place), and whose
  // partitionIdHeader was absent or no partition number: counted, as Flume would not.
  void headers_missed(uint64_t topic_headers, uint64_t partition_headers) {
    if (topic_headers) topic_header_missing_.fetch_add(topic_headers, std::memory_order_relaxed);
    if (partition_headers) partition_header_unusable_.fetch_add(partition_headers, std::memory_order_relaxed);
  }
  // The sink's own destination is not served (logged when it starts waiting, then every 10 s),
  // or is again.
  void destination_waiting(const std::string& topic, const std::string& problem);
  void destination_served();
  // Events set aside (their partition not served), and as many taken out of it again.
  void set_aside(uint64_t events);
  void aside_now(uint64_t events) { aside_.store(events, std::memory_order_relaxed); }
  // The window's head waited only for partitions without a leader: librdkafka gave back what it held.
  void unblocked();
  // An event's topic was not used: counted by reason, logged (rate-limited).
  void retopicked(Retopicked reason);
  void event_topics(size_t in_use) { event_topics_.store(in_use, std::memory_order_relaxed); }

  SinkCounters counters() const;
  KafkaSinkCounters kafka_counters() const;
  // The sink's own families; `producer` (null when stopped) for its queue and brokers.
  void write_metrics(MetricsWriter& writer, const Producer* producer) const;
  // The type's families: librdkafka's process-wide error count.
  static void write_type_metrics(MetricsWriter& writer);

 private:
  const std::string sink_name_;
  std::atomic<uint64_t> taken_{0}, sent_{0}, failed_{0}, discarded_{0}, rolled_back_{0}, possibly_duplicated_{0},
      lost_after_handover_{0}, possibly_lost_{0}, producer_restarts_{0}, batches_{0}, topic_header_missing_{0},
      partition_header_unusable_{0};
  std::atomic<uint64_t> failed_by_reason_[kDeliveryErrorKinds] = {};
  std::atomic<uint64_t> dead_lettered_[kDeliveryErrorKinds] = {};
  std::atomic<int64_t> dead_letters_waiting_{0};
  std::atomic<uint64_t> tls_reloads_applied_{0}, tls_reloads_refused_{0};
  std::atomic<uint64_t> retopicked_[kRetopickedKinds] = {};
  std::atomic<uint64_t> set_aside_{0}, aside_{0}, unblocked_{0}, event_topics_{0};
  std::atomic<bool> waiting_{false}, served_{false};
  std::atomic<uint64_t> unserved_looks_{0};
  RecentWrites writes_;
  Clock::time_point waiting_since_{};  // the sink's thread's
  bool waiting_logged_ = false;
  AtomicDurationHistogram batch_seconds_;
  PipelineLatency latency_;
  LogLimiter failure_log_, dead_letter_log_, waiting_log_, retopicked_log_, unblocked_log_, possibly_lost_log_;
};

}  // namespace sluice::kafka
