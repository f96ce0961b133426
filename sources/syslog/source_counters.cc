#include "sources/syslog/source_counters.h"

#include <spdlog/spdlog.h>

#include "agent/api/metric_names.h"

namespace sluice::syslog {

void write_port_frame_families(MetricsWriter& w, const std::string& source, const PortFrameTotals& p) {
  const MetricLabels l{{"source", source}, {"port", std::to_string(p.port)}};
  w.counter(metric_names::kSourceEventsReceivedTotal, "Events read from senders.", l, p.events);
  w.counter(metric_names::kSourceBytesReceivedTotal, "Bytes read from senders.", l, p.bytes);
  w.counter(metric_names::kSourceFramesInvalidTotal, "Frames without a valid PRI (kept, status Invalid).", l,
            p.invalid);
  w.counter(metric_names::kSourceFramesTruncatedTotal, "Frames longer than eventSize (cut, status Incomplete).", l,
            p.truncated);
  w.counter(metric_names::kSourceEventsInvalidUtf8Total, "Events whose invalid UTF-8 was replaced by U+FFFD.", l,
            p.invalid_utf8);
  w.counter(metric_names::kSourceBlankLinesTotal, "Empty frames skipped.", l, p.blank_lines);
}

void write_filtered_family(MetricsWriter& w, const std::string& source, uint64_t filtered) {
  w.counter(metric_names::kSourceEventsFilteredTotal,
            "Events the source's interceptors filtered out (regex_filter): read, counted, not put.",
            {{"source", source}}, filtered);
}

void log_dropped_at_shutdown(LogLimiter& log, const std::string& source, const std::string& channel, uint64_t events) {
  if (auto note = log.next())
    spdlog::error(
        "source {}: channel {} still full at the shutdown deadline: {} events dropped (counted as "
        "dropped_at_shutdown){}",
        source, channel, events, *note);
}

}  // namespace sluice::syslog
