#include "sources/pipeline/source_counters.h"

#include <spdlog/spdlog.h>

#include "agent/api/metric_names.h"

namespace sluice::pipeline {

void write_port_frame_families(MetricsWriter& w, const std::string& source, const PortFrameTotals& p) {
  const MetricLabels l{{"source", source}, {"port", std::to_string(p.port)}};
  w.counter(metric_names::kSourceEventsReceivedTotal, l, p.events);
  w.counter(metric_names::kSourceBytesReceivedTotal, l, p.bytes);
  w.counter(metric_names::kSourceFramesInvalidTotal, l, p.invalid);
  w.counter(metric_names::kSourceFramesTruncatedTotal, l, p.truncated);
  w.counter(metric_names::kSourceEventsInvalidUtf8Total, l, p.invalid_utf8);
  w.counter(metric_names::kSourceBlankLinesTotal, l, p.blank_lines);
}

void write_filtered_family(MetricsWriter& w, const std::string& source, uint64_t filtered) {
  w.counter(metric_names::kSourceEventsFilteredTotal, {{"source", source}}, filtered);
}

RouteCounters::RouteCounters(std::string source, const std::vector<Channel*>& channels, const ChannelSelector& selector)
    : source_(std::move(source)),
      optional_(channels.size(), false),
      dropped_(channels.size()),
      dropped_logs_(channels.size()) {
  for (const Channel* channel : channels) channels_.push_back(channel->name());
  for (const ChannelRoute& route : selector.routes())
    for (const size_t channel : route.optional) optional_[channel] = true;
}

void RouteCounters::optional_dropped(size_t channel, uint64_t events) {
  dropped_[channel].add(events);
  if (auto note = dropped_logs_[channel].next())
    spdlog::warn(
        "source {}: optional channel {} is full: {} events not copied into it (counted in "
        "sluice_source_optional_copies_dropped_total; the required channels have them){}",
        source_, channels_[channel], events, *note);
}

void RouteCounters::unrouted(uint64_t events) {
  unrouted_.add(events);
  if (auto note = unrouted_log_.next())
    spdlog::warn(
        "source {}: {} events went to no channel: their selector header maps to none and selector.default is "
        "not set (counted in sluice_source_events_unrouted_total){}",
        source_, events, *note);
}

uint64_t RouteCounters::optional_dropped() const {
  uint64_t total = 0;
  for (const Counter& c : dropped_) total += c.get();
  return total;
}

SourceCounters RouteCounters::with(SourceCounters counters) const {
  counters.events_unrouted += unrouted();
  counters.optional_copies_dropped += optional_dropped();
  return counters;
}

void RouteCounters::write_metrics(MetricsWriter& w) const {
  for (size_t i = 0; i < channels_.size(); ++i)
    if (optional_[i])
      w.counter(metric_names::kSourceOptionalCopiesDroppedTotal, {{"source", source_}, {"channel", channels_[i]}},
                dropped_[i].get());
  w.counter(metric_names::kSourceEventsUnroutedTotal, {{"source", source_}}, unrouted_.get());
}

void log_dropped_at_shutdown(LogLimiter& log, const std::string& source, const std::string& channel, uint64_t events) {
  if (auto note = log.next())
    spdlog::error(
        "source {}: channel {} still full at the shutdown deadline: {} events dropped (counted as "
        "dropped_at_shutdown){}",
        source, channel, events, *note);
}

}  // namespace sluice::pipeline
