#include "agent/metrics.h"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <sstream>

#include "agent/agent.h"
#include "agent/metric_names.h"
#include "sinks/kafka/producer.h"

namespace sluice {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
namespace names = metric_names;

// Collects samples by family name, in first-use order.
class Families {
 public:
  void add(const char* name, MetricType type, const char* help, std::vector<ClientMetric::Label> labels, double value) {
    MetricFamily& f = family(name, type, help);
    ClientMetric m;
    m.label = std::move(labels);
    if (type == MetricType::Counter) m.counter.value = value;
    else m.gauge.value = value;
    f.metric.push_back(std::move(m));
  }
  void add_histogram(const char* name, const char* help, std::vector<ClientMetric::Label> labels,
                     const DurationHistogram& h) {
    MetricFamily& f = family(name, MetricType::Histogram, help);
    ClientMetric m;
    m.label = std::move(labels);
    m.histogram.sample_count = h.count;
    m.histogram.sample_sum = h.sum_seconds;
    uint64_t cumulative = 0;
    for (size_t b = 0; b < DurationHistogram::kBuckets; ++b) {
      cumulative += h.counts[b];
      m.histogram.bucket.push_back({cumulative, b + 1 < DurationHistogram::kBuckets
                                                    ? DurationHistogram::kBounds[b]
                                                    : std::numeric_limits<double>::infinity()});
    }
    f.metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> take() { return std::move(families_); }

 private:
  MetricFamily& family(const char* name, MetricType type, const char* help) {
    auto [it, inserted] = index_.emplace(name, families_.size());
    if (inserted) families_.push_back(MetricFamily{name, help, type, {}});
    return families_[it->second];
  }
  std::map<std::string, size_t> index_;
  std::vector<MetricFamily> families_;
};

}  // namespace

std::string prometheus_text(const Agent& agent) {
  Families f;
  using T = MetricType;
  for (const auto& source : agent.sources()) {
    const SourceCounters c = source->counters();
    const std::string& n = source->name();
    for (const PortCounters& p : c.per_port) {
      const std::vector<ClientMetric::Label> l{{"source", n}, {"port", std::to_string(p.port)}};
      f.add(names::kSourceEventsReceived, T::Counter, "Events read from senders.", l, p.events);
      f.add(names::kSourceBytesReceived, T::Counter, "Bytes read from senders.", l, p.bytes);
      f.add(names::kSourceFramesInvalid, T::Counter, "Frames without a valid PRI (kept, status Invalid).", l, p.invalid);
      f.add(names::kSourceFramesTruncated, T::Counter, "Frames longer than eventSize (cut, status Incomplete).", l,
            p.truncated);
      f.add(names::kSourceFramesCut, T::Counter,
            "Partial frames the agent cut by closing the connection (shutdown, idleTimeout): kept, status Incomplete.",
            l, p.cut);
      f.add(names::kSourceBlankLines, T::Counter, "Empty frames skipped.", l, p.blank_lines);
      f.add(names::kSourceFramesOctetCounted, T::Counter, "Frames that came RFC 6587 octet-counted.", l, p.octet_counted);
      f.add(names::kSourceEventsInvalidUtf8, T::Counter, "Events whose invalid UTF-8 was replaced by U+FFFD.", l,
            p.invalid_utf8);
    }
    f.add(names::kSourceConnections, T::Gauge, "Open connections.", {{"source", n}},
          static_cast<double>(c.connections_accepted - c.connections_closed));
    f.add(names::kSourceConnectionsAccepted, T::Counter, "Connections accepted.", {{"source", n}}, c.connections_accepted);
    f.add(names::kSourceConnectionsRefused, T::Counter, "Connections closed at once, by reason.",
          {{"source", n}, {"reason", "denied"}}, c.connections_refused_denied);
    f.add(names::kSourceConnectionsRefused, T::Counter, "Connections closed at once, by reason.",
          {{"source", n}, {"reason", "limit"}}, c.connections_refused_limit);
    f.add(names::kSourceConnectionsIdleClosed, T::Counter, "Connections closed by idleTimeout.", {{"source", n}},
          c.connections_idle_closed);
    f.add(names::kSourceAcceptErrors, T::Counter, "accept() failures (e.g. out of file descriptors).", {{"source", n}},
          c.accept_errors);
    f.add(names::kSourceReadErrors, T::Counter, "Connections ended by a read error.", {{"source", n}}, c.read_errors);
    f.add(names::kSourceDroppedAtShutdown, T::Counter, "Events read but not put into a channel by the shutdown deadline.",
          {{"source", n}}, c.events_dropped_at_shutdown);
    f.add(names::kSourceUnreadAtShutdown, T::Counter, "Bytes senders had delivered, left unread when the shutdown grace ended.",
          {{"source", n}}, c.bytes_unread_at_shutdown);
  }
  for (const auto& channel : agent.channels()) {
    const ChannelCounters c = channel->counters();
    const std::vector<ClientMetric::Label> l{{"channel", channel->name()}};
    f.add(names::kChannelEvents, T::Gauge, "Events held: queued plus taken but not committed.", l, c.events_held);
    f.add(names::kChannelBytes, T::Gauge, "Bytes of event data held.", l, c.bytes_held);
    f.add(names::kChannelCapacity, T::Gauge, "Events the channel holds at most.", l, channel->capacity());
    f.add(names::kChannelPut, T::Counter, "Events put by sources.", l, c.events_put);
    f.add(names::kChannelTaken, T::Counter, "Events taken by sinks (retries included).", l, c.events_taken);
    f.add(names::kChannelCommitted, T::Counter, "Events committed by sinks.", l, c.events_committed);
    f.add(names::kChannelRolledBack, T::Counter, "Events a sink put back for another attempt.", l, c.events_rolled_back);
    f.add(names::kChannelPutBlocked, T::Counter, "Time sources waited for room: backpressure.", l,
          std::chrono::duration<double>(c.put_blocked).count());
    if (c.has_disk) {
      f.add(names::kChannelDiskEvents, T::Gauge, "Events held in records on disk (kept across restarts).", l,
            c.events_on_disk);
      f.add(names::kChannelDiskBytes, T::Gauge, "Bytes of segment files and commit log.", l, c.bytes_on_disk);
      f.add(names::kChannelSpilled, T::Counter, "Events put to disk because memory was full.", l, c.events_spilled);
      f.add(names::kChannelRecovered, T::Counter, "Events found on disk at start and replayed.", l, c.events_recovered);
      f.add(names::kChannelCorruptTails, T::Counter, "Segments cut at a torn or corrupt record at start.", l,
            c.corrupt_tails);
      f.add(names::kChannelUnreadable, T::Counter, "Events of records whose CRC failed when read back: lost.", l,
            c.events_unreadable);
      f.add(names::kChannelDiskWriteErrors, T::Counter,
            "Commit log writes and fsyncs that failed (disk full, I/O error): the records concerned may be delivered "
            "again after a restart.", l, c.disk_write_errors);
    }
  }
  for (const auto& sink : agent.sinks()) {
    const SinkCounters c = sink->counters();
    const std::vector<ClientMetric::Label> l{{"sink", sink->name()}};
    f.add(names::kSinkEventsTaken, T::Counter, "Events taken from the channel.", l, c.events_taken);
    f.add(names::kSinkEventsSent, T::Counter, "Events handed to Kafka (acks=0) or acknowledged (acks>=1).", l, c.events_sent);
    for (const auto& [reason, count] : c.failed_by_reason)
      f.add(names::kSinkDeliveryErrors, T::Counter, "Events whose delivery failed, by reason (each attempt counts).",
            {{"sink", sink->name()}, {"reason", reason}}, count);
    f.add(names::kSinkEventsDiscarded, T::Counter,
          "Events failed for good (too large, invalid, a partition or topic from the event that does not exist): not "
          "retried.", l, c.events_discarded);
    f.add(names::kSinkEventsRolledBack, T::Counter, "Events put back into the channel to be retried.", l,
          c.events_rolled_back);
    f.add(names::kSinkLostAfterHandover, T::Counter,
          "acks=0: events handed over to librdkafka (counted as sent) whose delivery then failed: lost.", l,
          c.events_lost_after_handover);
    f.add(names::kSinkPossiblyDuplicated, T::Counter,
          "Of the events rolled back, those the broker may have stored already (sent, then the answer was lost or "
          "purged): sending them again may duplicate them.", l, c.events_possibly_duplicated);
    f.add(names::kSinkProducerRestarts, T::Counter, "New Kafka producers made after fatal errors.", l,
          c.producer_restarts);
    f.add_histogram(names::kSinkBatchSeconds, "Time from take to commit, per batch.", l, c.batch_seconds);
    f.add(names::kSinkKafkaQueue, T::Gauge, "Messages waiting in the sink's Kafka producer.", l,
          static_cast<double>(c.queue_messages));
    for (const SinkCounters::Broker& b : c.brokers) {
      const std::vector<ClientMetric::Label> bl{{"sink", sink->name()}, {"broker", b.name}};
      f.add(names::kKafkaBrokerUp, T::Gauge, "1 if the sink's producer is connected to the broker (librdkafka state UP).",
            bl, b.up ? 1 : 0);
      f.add(names::kKafkaBrokerRttAvg, T::Gauge, "Average request round-trip time to the broker (librdkafka statistics).",
            bl, b.rtt_avg_seconds);
      f.add(names::kKafkaBrokerRttP99, T::Gauge, "99th percentile request round-trip time to the broker.", bl,
            b.rtt_p99_seconds);
    }
  }
  f.add(names::kKafkaClientErrors, T::Counter, "Errors librdkafka reported about the cluster (unreachable, auth, ...).",
        {}, static_cast<double>(kafka::client_errors()));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, f.take());
  return out.str();
}

std::string flume_json(const Agent& agent) {
  // Flume's JSON reporting: one object per component, every value a string.
  std::ostringstream out;
  bool first = true;
  auto object = [&](const std::string& key, const std::vector<std::pair<const char*, std::string>>& fields) {
    out << (first ? "{" : ",") << "\n\"" << key << "\":{";
    first = false;
    for (size_t i = 0; i < fields.size(); ++i)
      out << (i ? "," : "") << "\"" << fields[i].first << "\":\"" << fields[i].second << "\"";
    out << "}";
  };
  auto n = [](auto v) { return std::to_string(v); };
  for (const auto& source : agent.sources()) {
    const SourceCounters c = source->counters();
    const uint64_t accepted = c.events_received - c.events_dropped_at_shutdown;
    object("SOURCE." + source->name(),
           {{"Type", "SOURCE"}, {"EventReceivedCount", n(c.events_received)}, {"EventAcceptedCount", n(accepted)},
            {"AppendBatchAcceptedCount", "0"}, {"OpenConnectionCount", n(c.connections_accepted - c.connections_closed)},
            {"EventReadFail", n(c.events_invalid)}, {"GenericProcessingFail", n(c.events_dropped_at_shutdown)}});
  }
  for (const auto& channel : agent.channels()) {
    const ChannelCounters c = channel->counters();
    char fill[32];
    std::snprintf(fill, sizeof fill, "%.1f", channel->capacity() ? 100.0 * c.events_held / channel->capacity() : 0.0);
    object("CHANNEL." + channel->name(),
           {{"Type", "CHANNEL"}, {"ChannelSize", n(c.events_held)}, {"ChannelCapacity", n(channel->capacity())},
            {"ChannelFillPercentage", fill}, {"EventPutAttemptCount", n(c.events_put)},
            {"EventPutSuccessCount", n(c.events_put)}, {"EventTakeAttemptCount", n(c.events_taken)},
            {"EventTakeSuccessCount", n(c.events_committed)}});
  }
  for (const auto& sink : agent.sinks()) {
    const SinkCounters c = sink->counters();
    object("SINK." + sink->name(),
           {{"Type", "SINK"}, {"EventDrainAttemptCount", n(c.events_taken)}, {"EventDrainSuccessCount", n(c.events_sent)},
            {"BatchCompleteCount", n(c.batches)}, {"EventWriteFail", n(c.events_failed)},
            {"RollbackCount", n(c.events_rolled_back)}});
  }
  out << (first ? "{}" : "\n}") << "\n";
  return out.str();
}

}  // namespace sluice
