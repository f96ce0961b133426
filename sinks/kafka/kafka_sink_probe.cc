#include "sinks/kafka/kafka_sink_probe.h"

#include <spdlog/spdlog.h>

#include "agent/api/metric_names.h"
#include "sinks/kafka/producer.h"

namespace sluice::kafka {

void KafkaSinkProbe::batch_done(std::chrono::nanoseconds took) {
  batch_seconds_.observe(took);
  batches_.fetch_add(1, std::memory_order_relaxed);
}

void KafkaSinkProbe::failed(DeliveryError reason, uint64_t count, const std::string& text,
                            std::string_view consequence) {
  failed_.fetch_add(count, std::memory_order_relaxed);
  failed_by_reason_[static_cast<int>(reason)].fetch_add(count, std::memory_order_relaxed);
  if (auto note = failure_log_.next())
    spdlog::error("sink {}: {} events not delivered ({}: {}); {}{}", sink_name_, count, to_string(reason), text,
                  consequence, *note);
}

void KafkaSinkProbe::dead_lettered(DeliveryError reason, uint64_t events, const std::string& topic) {
  dead_lettered_[static_cast<int>(reason)].fetch_add(events, std::memory_order_relaxed);
  if (auto note = dead_letter_log_.next())
    spdlog::warn("sink {}: {} events Kafka refused for good ({}) went to the dead-letter topic {}{}", sink_name_,
                 events, to_string(reason), topic, *note);
}

void KafkaSinkProbe::tls_files_changed(const std::string& files) {
  spdlog::info("sink {}: TLS files changed ({}): a new producer takes over once the takes in flight settle", sink_name_,
               files);
}

void KafkaSinkProbe::tls_reloaded(bool applied, const std::string& error) {
  if (applied) {
    tls_reloads_applied_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  tls_reloads_refused_.fetch_add(1, std::memory_order_relaxed);
  spdlog::error("sink {}: the changed TLS files do not load, the running producer goes on with the old ones: {}",
                sink_name_, error);
}

void KafkaSinkProbe::lost_after_handover(DeliveryError reason, uint64_t count, const std::string& text) {
  lost_after_handover_.fetch_add(count, std::memory_order_relaxed);
  failed(reason, count, text, "acks=0: they were handed over and are lost (counted)");
}

void KafkaSinkProbe::connection_lost(int32_t broker, int64_t tick) {
  const uint64_t written = writes_.take(broker, tick);
  if (!written) return;
  possibly_lost_.fetch_add(written, std::memory_order_relaxed);
  if (auto note = possibly_lost_log_.next())
    spdlog::warn(
        "sink {}: the connection to broker {} went down; with acks=0 the {} events written to it in the two seconds "
        "before may not have been read by it (counted as possibly lost: acks=0 asks for no answer){}",
        sink_name_, broker, written, *note);
}

void KafkaSinkProbe::possibly_duplicated(uint64_t events) {
  possibly_duplicated_.fetch_add(events, std::memory_order_relaxed);
  spdlog::warn(
      "sink {}: {} of the events going back to the channel may already be in Kafka (sent, then the "
      "answer was lost or purged); they will be sent again and may be duplicated (counted as "
      "possibly_duplicated)",
      sink_name_, events);
}

void KafkaSinkProbe::producer_replaced(const std::string& reason) {
  const uint64_t restarts = producer_restarts_.fetch_add(1) + 1;
  spdlog::error(
      "sink {}: the Kafka producer {}; what it held went back to the channel (acks >= 1) and a new producer "
      "takes over (restart {})",
      sink_name_, reason, restarts);
}

// A wait shorter than this (the cluster view's first answer, a topic being created) is not worth a line.
constexpr auto kWaitWorthALine = std::chrono::seconds(2);

void KafkaSinkProbe::destination_waiting(const std::string& topic, const std::string& problem) {
  const auto now = Clock::now();
  served_.store(false, std::memory_order_relaxed);
  unserved_looks_.fetch_add(1, std::memory_order_relaxed);
  if (!waiting_.exchange(true, std::memory_order_relaxed)) waiting_since_ = now;
  if (now - waiting_since_ < kWaitWorthALine) return;
  if (auto note = waiting_log_.next()) {
    waiting_logged_ = true;
    spdlog::warn("sink {}: waiting to send to {}: {}; nothing is taken from the channel until it is served{}",
                 sink_name_, topic, problem, *note);
  }
}

void KafkaSinkProbe::destination_served() {
  served_.store(true, std::memory_order_relaxed);
  if (!waiting_.exchange(false, std::memory_order_relaxed)) return;
  if (std::exchange(waiting_logged_, false))
    spdlog::info("sink {}: its destination is served after {} ms; sending", sink_name_,
                 std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - waiting_since_).count());
}

void KafkaSinkProbe::set_aside(uint64_t events) { set_aside_.fetch_add(events, std::memory_order_relaxed); }

void KafkaSinkProbe::unblocked() {
  unblocked_.fetch_add(1, std::memory_order_relaxed);
  if (auto note = unblocked_log_.next())
    spdlog::warn(
        "sink {}: its oldest take waits only for partitions without a leader: the producer gives back what it has "
        "not sent (back to the channel, taken again; those partitions' events wait aside){}",
        sink_name_, *note);
}

void KafkaSinkProbe::retopicked(Retopicked reason) {
  retopicked_[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
  if (auto note = retopicked_log_.next())
    spdlog::warn(
        "sink {}: an event named a topic the sink does not use ({}); it goes to the sink's own topic{}", sink_name_,
        reason == Retopicked::not_allowed ? "not matched by allowedTopics" : "maxTopics topics are in use", *note);
}

SinkCounters KafkaSinkProbe::counters() const {
  SinkCounters c;
  c.events_taken = taken_.load();
  c.events_sent = sent_.load();
  c.events_failed = failed_.load();
  c.events_rolled_back = rolled_back_.load();
  c.events_discarded = discarded_.load();
  c.events_possibly_duplicated = possibly_duplicated_.load();
  c.events_lost_after_handover = lost_after_handover_.load();
  c.events_possibly_lost = possibly_lost_.load();
  c.batch_seconds = batch_seconds_.snapshot();
  c.latency = latency_.snapshot();
  c.batches = batches_.load();
  return c;
}

KafkaSinkCounters KafkaSinkProbe::kafka_counters() const {
  KafkaSinkCounters c;
  c.destination_served = served_.load(std::memory_order_relaxed);
  c.unserved_looks = unserved_looks_.load(std::memory_order_relaxed);
  c.event_topics = event_topics_.load(std::memory_order_relaxed);
  c.producer_restarts = producer_restarts_.load();
  for (int r = 0; r < kDeliveryErrorKinds; ++r) {
    if (const uint64_t n = failed_by_reason_[r].load())
      c.failed_by_reason.emplace_back(std::string(to_string(static_cast<DeliveryError>(r))), n);
    c.dead_lettered += dead_lettered_[r].load(std::memory_order_relaxed);
  }
  c.dead_letters_waiting = dead_letters_waiting_.load(std::memory_order_relaxed);
  return c;
}

void KafkaSinkProbe::write_metrics(MetricsWriter& w, const Producer* producer) const {
  const KafkaSinkCounters c = kafka_counters();
  const MetricLabels l{{"sink", sink_name_}};
  for (const auto& [reason, count] : c.failed_by_reason)
    w.counter(metric_names::kSinkDeliveryErrorsTotal, {{"sink", sink_name_}, {"reason", reason}}, count);
  for (DeliveryError reason : {DeliveryError::too_large, DeliveryError::invalid_message, DeliveryError::invalid_topic,
                               DeliveryError::unknown_topic, DeliveryError::unknown_partition})
    w.counter(metric_names::kSinkEventsDeadLetteredTotal,
              {{"sink", sink_name_}, {"reason", std::string(to_string(reason))}},
              static_cast<double>(dead_lettered_[static_cast<int>(reason)].load(std::memory_order_relaxed)));
  w.gauge(metric_names::kSinkDeadLettersWaiting, l, static_cast<double>(c.dead_letters_waiting));
  w.counter(metric_names::kSinkProducerRestartsTotal, l, c.producer_restarts);
  w.counter(metric_names::kSinkTlsReloadsTotal, {{"sink", sink_name_}, {"result", "applied"}},
            static_cast<double>(tls_reloads_applied_.load(std::memory_order_relaxed)));
  w.counter(metric_names::kSinkTlsReloadsTotal, {{"sink", sink_name_}, {"result", "refused"}},
            static_cast<double>(tls_reloads_refused_.load(std::memory_order_relaxed)));
  w.counter(metric_names::kSinkTopicHeaderMissingTotal, l, topic_header_missing_.load(std::memory_order_relaxed));
  w.counter(metric_names::kSinkPartitionHeaderUnusableTotal, l,
            partition_header_unusable_.load(std::memory_order_relaxed));
  w.gauge(metric_names::kSinkKafkaQueueMessages, l, producer ? producer->queue_length() : 0);
  w.gauge(metric_names::kSinkDestinationServed, l, served_.load(std::memory_order_relaxed) ? 1 : 0);
  w.gauge(metric_names::kSinkEventsAside, l, static_cast<double>(aside_.load(std::memory_order_relaxed)));
  w.counter(metric_names::kSinkEventsSetAsideTotal, l, static_cast<double>(set_aside_.load(std::memory_order_relaxed)));
  w.counter(metric_names::kSinkWindowUnblockedTotal, l,
            static_cast<double>(unblocked_.load(std::memory_order_relaxed)));
  w.gauge(metric_names::kSinkEventTopics, l, static_cast<double>(event_topics_.load(std::memory_order_relaxed)));
  for (int r = 0; r < kRetopickedKinds; ++r)
    w.counter(metric_names::kSinkEventTopicsRefusedTotal,
              {{"sink", sink_name_}, {"reason", r == 0 ? "not_allowed" : "max_topics"}},
              static_cast<double>(retopicked_[r].load(std::memory_order_relaxed)));
  if (!producer) return;
  w.gauge(metric_names::kSinkKafkaTopicHandles, l, static_cast<double>(producer->topics_held()));
  for (const BrokerStats& b : producer->broker_stats()) {
    const MetricLabels bl{{"sink", sink_name_}, {"broker", b.name}};
    w.gauge(metric_names::kKafkaBrokerUp, bl, b.up ? 1 : 0);
    w.gauge(metric_names::kKafkaBrokerRttAvgSeconds, bl, b.rtt_avg_seconds);
    w.gauge(metric_names::kKafkaBrokerRttP99Seconds, bl, b.rtt_p99_seconds);
  }
}

void KafkaSinkProbe::write_type_metrics(MetricsWriter& w) {
  w.counter(metric_names::kKafkaClientErrorsTotal, {}, static_cast<double>(client_errors()));
}

}  // namespace sluice::kafka
