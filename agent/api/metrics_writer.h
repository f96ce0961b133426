#pragma once
// How a component reports its metrics: it writes its own families through this interface, in
// both of the agent's formats at once (Prometheus samples, and the fields of its object in
// Flume's JSON reporting). The agent renders each format with a writer that takes its part and
// ignores the other, so a component's metrics are declared in one place, its probe.
//
// Names follow sluice_<area>_<noun>_<unit>[_total], base units, bounded labels (component
// name, port, a reason from a fixed set): never a client address.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// Durations in fixed buckets, recorded per batch (never per event).
struct DurationHistogram {
  static constexpr double kBounds[] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10};
  static constexpr size_t kBuckets = sizeof(kBounds) / sizeof(kBounds[0]) + 1;  // the last: +Inf
  uint64_t counts[kBuckets] = {};                                               // per bucket, not cumulative
  double sum_seconds = 0;
  uint64_t count = 0;
  static size_t bucket_of(double seconds) {
    size_t i = 0;
    while (i + 1 < kBuckets && seconds > kBounds[i]) ++i;
    return i;
  }
};

class MetricsWriter {
 public:
  virtual ~MetricsWriter() = default;
  // One Prometheus sample of family `name`; the family's help and type come with its first.
  virtual void counter(const char* name, const char* help, MetricLabels labels, double value) = 0;
  virtual void gauge(const char* name, const char* help, MetricLabels labels, double value) = 0;
  virtual void histogram(const char* name, const char* help, MetricLabels labels, const DurationHistogram& h) = 0;
  // One field of the component's object in Flume's JSON reporting ("EventReceivedCount").
  virtual void flume(std::string_view field, std::string value) = 0;
};

}  // namespace sluice
