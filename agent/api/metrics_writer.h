#pragma once
// How a component reports its metrics: it writes its own families through this interface, in
// both of the agent's formats at once (Prometheus samples, and the fields of its object in
// Flume's JSON reporting). The agent renders each format with a writer that takes its part and
// ignores the other, so a component's metrics are declared in one place, its probe.
//
// Names follow sluice_<area>_<noun>_<unit>[_total], base units, bounded labels (component
// name, port, a reason from a fixed set): never a client address.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/api/metric_names.h"

namespace sluice {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// Durations in fixed buckets, recorded per batch (never per event); a batch may weigh as many
// observations as it holds events. 1-2.5-5 steps from 250 µs to a minute: fine enough for a
// p50 of a few milliseconds, wide enough for an outage's backlog.
struct DurationHistogram {
  static constexpr double kBounds[] = {0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                       0.25,    0.5,    1,     2.5,    5,     10,   30,    60};
  static constexpr size_t kBuckets = sizeof(kBounds) / sizeof(kBounds[0]) + 1;  // the last: +Inf
  uint64_t counts[kBuckets] = {};                                               // per bucket, not cumulative
  double sum_seconds = 0;
  uint64_t count = 0;
  static size_t bucket_of(double seconds) {
    size_t i = 0;
    while (i + 1 < kBuckets && seconds > kBounds[i]) ++i;
    return i;
  }
  DurationHistogram& operator+=(const DurationHistogram& h) {
    for (size_t b = 0; b < kBuckets; ++b) counts[b] += h.counts[b];
    sum_seconds += h.sum_seconds;
    count += h.count;
    return *this;
  }
};

// A DurationHistogram that one thread observes into while others read it.
class AtomicDurationHistogram {
 public:
  void observe(std::chrono::nanoseconds duration, uint64_t weight = 1) {
    const double seconds = std::chrono::duration<double>(duration).count();
    counts_[DurationHistogram::bucket_of(seconds)].fetch_add(weight, std::memory_order_relaxed);
    sum_seconds_.fetch_add(seconds * static_cast<double>(weight), std::memory_order_relaxed);
  }
  DurationHistogram snapshot() const {
    DurationHistogram h;
    for (size_t b = 0; b < DurationHistogram::kBuckets; ++b) {
      h.counts[b] = counts_[b].load(std::memory_order_relaxed);
      h.count += h.counts[b];
    }
    h.sum_seconds = sum_seconds_.load(std::memory_order_relaxed);
    return h;
  }

 private:
  std::atomic<uint64_t> counts_[DurationHistogram::kBuckets] = {};
  std::atomic<double> sum_seconds_{0};
};

class MetricsWriter {
 public:
  virtual ~MetricsWriter() = default;
  // One Prometheus sample of family `name`; the family's help and type come with its first.
  virtual void counter(const char* name, const char* help, MetricLabels labels, double value) = 0;
  virtual void gauge(const char* name, const char* help, MetricLabels labels, double value) = 0;
  virtual void histogram(const char* name, const char* help, MetricLabels labels, const DurationHistogram& h) = 0;
  // A sample of a family of metric_names.h, with the table's help.
  void counter(const metric_names::Family& family, MetricLabels labels, double value) {
    counter(family.name, family.help, labels, value);
  }
  void gauge(const metric_names::Family& family, MetricLabels labels, double value) {
    gauge(family.name, family.help, labels, value);
  }
  void histogram(const metric_names::Family& family, MetricLabels labels, const DurationHistogram& h) {
    histogram(family.name, family.help, labels, h);
  }
  // One field of the component's object in Flume's JSON reporting ("EventReceivedCount").
  virtual void flume(std::string_view field, std::string value) = 0;
};

}  // namespace sluice
