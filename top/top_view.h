#pragma once
// What `sluice top` shows, from two scrapes of an agent's /metrics one refresh apart: per
// source, channel and sink the rates over that interval and the levels now, the pipeline
// latency of the interval, and every failure counted since the agent started. Pure: parsed
// samples in, lines of text out, so that it is tested without a terminal.

#include <chrono>
#include <string>
#include <vector>

#include "top/prometheus_text.h"

namespace sluice::top {

struct Scrape {
  std::chrono::steady_clock::time_point at;
  std::vector<Sample> samples;
};

struct SourceRow {
  std::string name;
  double events_per_s = 0, bytes_per_s = 0, connections = 0;
};

struct ChannelRow {
  std::string name;
  double events = 0, capacity = 0, put_per_s = 0, taken_per_s = 0;
  double blocked_percent = 0;  // of the interval, sources waiting for room (summed over their threads)
  double disk_events = -1;     // spillable and file channels; -1 for the others
};

struct SinkRow {
  std::string name;
  double sent_per_s = 0, kafka_queue = 0;
  double rtt_avg_ms = -1, rtt_p99_ms = -1;  // the worst of its brokers; -1: no broker statistics (yet)
  double brokers_up = 0, brokers = 0;
  double latency_p50_ms = -1, latency_p99_ms = -1;  // of the events committed in the interval; -1: none
};

struct FailureRow {
  std::string what;       // e.g. "delivery failed", "connection refused"
  std::string component;  // "sink k1", "source r1", "agent"
  std::string reason;     // the reason label, if any
  double total = 0, per_s = 0;
};

struct TopView {
  double seconds = 0;  // between the two scrapes; 0 on the first (rates not known yet)
  double events_in_per_s = 0, events_out_per_s = 0;
  std::vector<SourceRow> sources;
  std::vector<ChannelRow> channels;
  std::vector<SinkRow> sinks;
  std::vector<FailureRow> failures;  // non-zero totals only
};

// `before` may be `now` itself (the first refresh): levels are shown, rates are not yet.
TopView compute_view(const Scrape& before, const Scrape& now);

// The screen: a title line, then the tables (control characters in the agent's names shown as ?).
std::vector<std::string> render_view(const TopView& view, const std::string& title);

// `lines` cut to a terminal of `columns` x `rows` (rows 0: not known, not cut): each line at most
// columns - 1 characters; when there are more lines than rows, the last row says how many were
// left out (one row: the title alone).
std::vector<std::string> fit_to_screen(std::vector<std::string> lines, size_t columns, size_t rows);

// The q-quantile (0 < q < 1) in seconds of what histogram `family` (its _bucket samples whose
// label `key` is `value`) gained from `before` to `now`, interpolated within its bucket as
// Prometheus' histogram_quantile does; -1 if it gained nothing.
double histogram_quantile_between(const Scrape& before, const Scrape& now, const std::string& family,
                                  const std::string& key, const std::string& value, double q);

}  // namespace sluice::top
