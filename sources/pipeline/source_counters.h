#pragma once
// What every syslog source (TCP, TLS, RELP, UDP) counts of the frames it reads, per port, and the
// metric families it writes of them; each source adds its own beside (a stream's cut frames, a
// datagram socket's kernel drops). Counting is per io thread (written by its thread alone, so
// that the hot counters share no cache line across threads) and summed when read.

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "agent/api/channel.h"
#include "agent/api/channel_selector.h"
#include "agent/api/log_limiter.h"
#include "agent/api/metrics_writer.h"
#include "agent/api/source.h"

namespace sluice::pipeline {

struct Counter {
  std::atomic<uint64_t> value{0};
  void add(uint64_t n) { value.fetch_add(n, std::memory_order_relaxed); }
  uint64_t get() const { return value.load(std::memory_order_relaxed); }
};

// One port's, on one io thread (a source's own struct derives from it, cache-line aligned: with
// its own two counters, one line).
struct PortFrameCounters {
  Counter events, bytes, invalid, truncated, invalid_utf8, blank_lines;
};

// One port's, summed over the io threads.
struct PortFrameTotals {
  uint16_t port = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;
  uint64_t invalid = 0;       // no valid syslog header: kept whole, status Invalid
  uint64_t truncated = 0;     // longer than eventSize: cut, status Incomplete
  uint64_t invalid_utf8 = 0;  // events whose invalid UTF-8 was replaced by U+FFFD
  uint64_t blank_lines = 0;   // empty frames, skipped

  void add(const PortFrameCounters& c) {
    events += c.events.get();
    bytes += c.bytes.get();
    invalid += c.invalid.get();
    truncated += c.truncated.get();
    invalid_utf8 += c.invalid_utf8.get();
    blank_lines += c.blank_lines.get();
  }
};

// Each bound port's totals (a PortFrameTotals with a source's own per-port counts), summed over the
// io threads' counters (`io`: each has a per_port deque in the ports' order); `add_own(to, from)`
// adds what the source counts per port beside the frames.
template <class Totals, class IoCounters, class AddOwn>
std::vector<Totals> sum_ports(const std::vector<uint16_t>& ports, const std::deque<IoCounters>& io, AddOwn&& add_own) {
  std::vector<Totals> totals(ports.size());
  for (size_t i = 0; i < ports.size(); ++i) totals[i].port = ports[i];
  for (const IoCounters& thread : io)
    for (size_t i = 0; i < thread.per_port.size() && i < totals.size(); ++i) {
      totals[i].add(thread.per_port[i]);
      add_own(totals[i], thread.per_port[i]);
    }
  return totals;
}

// sluice_source_{events_received,bytes_received,frames_invalid,frames_truncated,
// events_invalid_utf8,blank_lines}_total{source,port}.
void write_port_frame_families(MetricsWriter& writer, const std::string& source, const PortFrameTotals& port);
// The events the source's interceptors filtered out (every syslog source has the family).
void write_filtered_family(MetricsWriter& writer, const std::string& source, uint64_t filtered);

// What a source's channel selector leaves undone (channel_selector.h): the copies each optional
// channel had no room for, and the events routed to no channel. Shared by the source's io
// threads (rare events: one counter each); each kind logged at most once per 10 s.
class RouteCounters {
 public:
  // `channels`: the source's, in its order; which are optional, its selector's routes say.
  RouteCounters(std::string source, const std::vector<Channel*>& channels, const ChannelSelector& selector);
  void optional_dropped(size_t channel, uint64_t events);
  void unrouted(uint64_t events);
  uint64_t optional_dropped() const;
  uint64_t unrouted() const { return unrouted_.get(); }
  // The source's counters with these added.
  SourceCounters with(SourceCounters counters) const;
  // sluice_source_optional_copies_dropped_total{source,channel} for each optional channel, and
  // sluice_source_events_unrouted_total{source}.
  void write_metrics(MetricsWriter& writer) const;

 private:
  const std::string source_;
  std::vector<std::string> channels_;
  std::vector<bool> optional_;
  std::deque<Counter> dropped_;  // per channel (a deque: atomics do not move)
  Counter unrouted_;
  std::deque<LogLimiter> dropped_logs_;
  LogLimiter unrouted_log_;
};

// A channel still full at the shutdown deadline: the events it never took, logged (the caller
// counts them).
void log_dropped_at_shutdown(LogLimiter& log, const std::string& source, const std::string& channel, uint64_t events);

}  // namespace sluice::pipeline
