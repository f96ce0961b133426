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

void KafkaSinkProbe::lost_after_handover(DeliveryError reason, uint64_t count, const std::string& text) {
  lost_after_handover_.fetch_add(count, std::memory_order_relaxed);
  failed(reason, count, text, "acks=0: they were handed over and are lost (counted)");
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

SinkCounters KafkaSinkProbe::counters() const {
  SinkCounters c;
  c.events_taken = taken_.load();
  c.events_sent = sent_.load();
  c.events_failed = failed_.load();
  c.events_rolled_back = rolled_back_.load();
  c.events_discarded = discarded_.load();
  c.events_possibly_duplicated = possibly_duplicated_.load();
  c.events_lost_after_handover = lost_after_handover_.load();
  c.batch_seconds = batch_seconds_.snapshot();
  c.latency = latency_.snapshot();
  c.batches = batches_.load();
  return c;
}

KafkaSinkCounters KafkaSinkProbe::kafka_counters() const {
  KafkaSinkCounters c;
  c.producer_restarts = producer_restarts_.load();
  for (int r = 0; r < kDeliveryErrorKinds; ++r)
    if (const uint64_t n = failed_by_reason_[r].load())
      c.failed_by_reason.emplace_back(std::string(to_string(static_cast<DeliveryError>(r))), n);
  return c;
}

void KafkaSinkProbe::write_metrics(MetricsWriter& w, const Producer* producer) const {
  const KafkaSinkCounters c = kafka_counters();
  const MetricLabels l{{"sink", sink_name_}};
  for (const auto& [reason, count] : c.failed_by_reason)
    w.counter(metric_names::kSinkDeliveryErrorsTotal, "Events whose delivery failed, by reason (each attempt counts).",
              {{"sink", sink_name_}, {"reason", reason}}, count);
  w.counter(metric_names::kSinkProducerRestartsTotal,
            "New Kafka producers made after fatal errors or a stalled partition.", l, c.producer_restarts);
  w.counter(metric_names::kSinkTopicHeaderMissingTotal,
            "kafka.topic %{header}s an event lacked (an empty string in its place, as Flume).", l,
            topic_header_missing_.load(std::memory_order_relaxed));
  w.counter(metric_names::kSinkPartitionHeaderUnusableTotal,
            "Events whose partitionIdHeader was absent or not a partition number (sent as if unset).", l,
            partition_header_unusable_.load(std::memory_order_relaxed));
  w.gauge(metric_names::kSinkKafkaQueueMessages, "Messages waiting in the sink's Kafka producer.", l,
          producer ? producer->queue_length() : 0);
  if (!producer) return;
  for (const BrokerStats& b : producer->broker_stats()) {
    const MetricLabels bl{{"sink", sink_name_}, {"broker", b.name}};
    w.gauge(metric_names::kKafkaBrokerUp, "1 if the sink's producer is connected to the broker (librdkafka state UP).",
            bl, b.up ? 1 : 0);
    w.gauge(metric_names::kKafkaBrokerRttAvgSeconds,
            "Average request round-trip time to the broker (librdkafka "
            "statistics).",
            bl, b.rtt_avg_seconds);
    w.gauge(metric_names::kKafkaBrokerRttP99Seconds, "99th percentile request round-trip time to the broker.", bl,
            b.rtt_p99_seconds);
  }
}

void KafkaSinkProbe::write_type_metrics(MetricsWriter& w) {
  w.counter(metric_names::kKafkaClientErrorsTotal,
            "Errors librdkafka reported about the cluster (unreachable, auth, ...).", {},
            static_cast<double>(client_errors()));
}

}  // namespace sluice::kafka
