#include "agent/metrics.h"

#include <unistd.h>

#include <fstream>

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "agent/agent.h"
#include "agent/api/metric_names.h"
#include "agent/component_registry.h"

namespace sluice {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
namespace names = metric_names;

// Prometheus: collects samples by family name, in first-use order; Flume fields are not its.
class PrometheusWriter final : public MetricsWriter {
 public:
  using MetricsWriter::counter;  // (a family of the table, too)
  using MetricsWriter::gauge;
  using MetricsWriter::histogram;
  void counter(const char* name, const char* help, MetricLabels labels, double value) override {
    sample(name, MetricType::Counter, help, std::move(labels)).counter.value = value;
  }
  void gauge(const char* name, const char* help, MetricLabels labels, double value) override {
    sample(name, MetricType::Gauge, help, std::move(labels)).gauge.value = value;
  }
  void histogram(const char* name, const char* help, MetricLabels labels, const DurationHistogram& h) override {
    ClientMetric& m = sample(name, MetricType::Histogram, help, std::move(labels));
    m.histogram.sample_count = h.count;
    m.histogram.sample_sum = h.sum_seconds;
    uint64_t cumulative = 0;
    for (size_t b = 0; b < DurationHistogram::kBuckets; ++b) {
      cumulative += h.counts[b];
      m.histogram.bucket.push_back({cumulative, b + 1 < DurationHistogram::kBuckets
                                                    ? DurationHistogram::kBounds[b]
                                                    : std::numeric_limits<double>::infinity()});
    }
  }
  void flume(std::string_view, std::string) override {}

  std::string text() {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, families_);
    return out.str();
  }

 private:
  ClientMetric& sample(const char* name, MetricType type, const char* help, MetricLabels labels) {
    auto [it, inserted] = index_.emplace(name, families_.size());
    if (inserted) families_.push_back(MetricFamily{name, help, type, {}});
    ClientMetric& m = families_[it->second].metric.emplace_back();
    for (auto& [label, value] : labels) m.label.push_back({std::move(label), std::move(value)});
    return m;
  }
  std::map<std::string, size_t> index_;
  std::vector<MetricFamily> families_;
};

// Flume's JSON reporting: one object per component, every value a string.
class FlumeJsonWriter final : public MetricsWriter {
 public:
  void counter(const char*, const char*, MetricLabels, double) override {}
  void gauge(const char*, const char*, MetricLabels, double) override {}
  void histogram(const char*, const char*, MetricLabels, const DurationHistogram&) override {}
  void flume(std::string_view field, std::string value) override {
    out_ << (fields_++ ? "," : "") << "\"" << field << "\":\"" << value << "\"";
  }

  void begin(const std::string& key, const char* type) {
    out_ << (objects_++ ? "," : "{") << "\n\"" << key << "\":{";
    fields_ = 0;
    flume("Type", type);
  }
  void end() { out_ << "}"; }
  std::string text() {
    out_ << (objects_ ? "\n}" : "{}") << "\n";
    return out_.str();
  }

 private:
  std::ostringstream out_;
  size_t objects_ = 0, fields_ = 0;
};

std::string n(uint64_t v) { return std::to_string(v); }

// The families and fields every channel has, from ChannelCounters; then the channel's own.
void write_channel(MetricsWriter& w, const Channel& channel) {
  const ChannelCounters c = channel.counters();
  const MetricLabels l{{"channel", channel.name()}};
  w.gauge(names::kChannelEvents, l, c.events_held);
  w.gauge(names::kChannelBytes, l, c.bytes_held);
  w.gauge(names::kChannelCapacityEvents, l, channel.capacity());
  w.counter(names::kChannelEventsPutTotal, l, c.events_put);
  w.counter(names::kChannelEventsTakenTotal, l, c.events_taken);
  w.counter(names::kChannelEventsCommittedTotal, l, c.events_committed);
  w.counter(names::kChannelEventsRolledBackTotal, l, c.events_rolled_back);
  w.counter(names::kChannelPutBlockedSecondsTotal, l, std::chrono::duration<double>(c.put_blocked).count());
  char fill[32];
  std::snprintf(fill, sizeof fill, "%.1f", channel.capacity() ? 100.0 * c.events_held / channel.capacity() : 0.0);
  w.flume("ChannelSize", n(c.events_held));
  w.flume("ChannelCapacity", n(channel.capacity()));
  w.flume("ChannelFillPercentage", fill);
  w.flume("EventPutAttemptCount", n(c.events_put));
  w.flume("EventPutSuccessCount", n(c.events_put));
  w.flume("EventTakeAttemptCount", n(c.events_taken));
  w.flume("EventTakeSuccessCount", n(c.events_committed));
  channel.write_metrics(w);
}

// The families and fields every sink has, from SinkCounters; then the sink's own.
void write_sink(MetricsWriter& w, const Sink& sink) {
  const SinkCounters c = sink.counters();
  const MetricLabels l{{"sink", sink.name()}};
  w.counter(names::kSinkEventsTakenTotal, l, c.events_taken);
  w.counter(names::kSinkEventsSentTotal, l, c.events_sent);
  w.counter(names::kSinkEventsDiscardedTotal, l, c.events_discarded);
  w.counter(names::kSinkEventsRolledBackTotal, l, c.events_rolled_back);
  w.counter(names::kSinkEventsLostTotal, l, c.events_lost_after_handover);
  w.counter(names::kSinkEventsPossiblyLostTotal, l, c.events_possibly_lost);
  w.counter(names::kSinkEventsPossiblyDuplicatedTotal, l, c.events_possibly_duplicated);
  w.histogram(names::kSinkBatchSeconds, l, c.batch_seconds);
  w.histogram(names::kPipelineLatencySeconds, l, c.latency.arrival_to_commit);
  w.histogram(names::kPipelineChannelWaitSeconds, l, c.latency.channel_wait);
  w.histogram(names::kPipelineDeliverySeconds, l, c.latency.delivery);
  w.flume("EventDrainAttemptCount", n(c.events_taken));
  w.flume("EventDrainSuccessCount", n(c.events_sent));
  w.flume("BatchCompleteCount", n(c.batches));
  w.flume("EventWriteFail", n(c.events_failed));
  w.flume("RollbackCount", n(c.events_rolled_back));
  sink.write_metrics(w);
}

// Resident pages of this process (/proc/self/statm's second field), in bytes.
uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

std::string prometheus_text(const Agent& agent) {
  PrometheusWriter w;
  for (size_t i = 0; i < kReloadOutcomes.size(); ++i)
    w.counter(metric_names::kConfigReloadsTotal, {{"result", std::string(kReloadOutcomes[i])}},
              agent.reloads(static_cast<ReloadOutcome>(i)));
  w.gauge(metric_names::kConfigLastReloadSuccessful, {}, agent.last_reload_successful() ? 1 : 0);
  w.gauge(metric_names::kConfigLastReloadSuccessTimestampSeconds, {}, agent.last_reload_success_seconds());
  const auto lock = agent.lock_components();
  if (const MemoryBound bound = agent.memory_bound(); bound.total != memory::kUnbounded)
    w.gauge(metric_names::kAgentMemoryBoundBytes, {}, static_cast<double>(bound.total));
  w.gauge(metric_names::kProcessResidentMemoryBytes, {}, static_cast<double>(resident_bytes()));
  for (const auto& source : agent.sources()) source->write_metrics(w);
  for (const auto& channel : agent.channels()) write_channel(w, *channel);
  for (const auto& sink : agent.sinks()) write_sink(w, *sink);
  for (const auto& [name, group] : agent.sink_groups())
    if (group) group->write_metrics(w);
  for (const ComponentSpec* spec : all_components())
    if (spec->write_type_metrics) spec->write_type_metrics(w);
  return w.text();
}

std::string flume_json(const Agent& agent) {
  FlumeJsonWriter w;
  const auto lock = agent.lock_components();
  for (const auto& source : agent.sources()) {
    w.begin("SOURCE." + source->name(), "SOURCE");
    source->write_metrics(w);
    w.end();
  }
  for (const auto& channel : agent.channels()) {
    w.begin("CHANNEL." + channel->name(), "CHANNEL");
    write_channel(w, *channel);
    w.end();
  }
  for (const auto& sink : agent.sinks()) {
    w.begin("SINK." + sink->name(), "SINK");
    write_sink(w, *sink);
    w.end();
  }
  return w.text();
}

}  // namespace sluice
