#pragma once
// What the syslog UDP source counts and logs, and the metrics it writes. Per io thread, as for
// TCP: each thread's counters are written by it alone and summed when read.

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "agent/api/log_limiter.h"
#include "agent/api/metrics_writer.h"
#include "agent/api/source.h"
#include "sources/pipeline/client_rate.h"
#include "sources/pipeline/source_counters.h"

namespace sluice::syslog_udp {

// One port's totals: what every syslog source counts (source_counters.h), and a datagram socket's own.
struct UdpPortCounters : pipeline::PortFrameTotals {
  uint64_t denied = 0, kernel_drops = 0;
};

struct SyslogUdpCounters {
  uint64_t events_received = 0, bytes_received = 0, events_truncated = 0, datagrams_denied = 0, kernel_drops = 0;
  uint64_t read_errors = 0, events_dropped_at_shutdown = 0, datagrams_unread_at_shutdown = 0;
  uint64_t events_filtered = 0;          // by the source's interceptors
  uint64_t events_over_client_rate = 0;  // dropped: their client over maxEventsPerSecondPerClient
  uint64_t clients_held = 0;             // now: clients whose datagrams are dropped so
  std::vector<UdpPortCounters> per_port;
};

struct alignas(64) UdpIoCounters {
  struct alignas(64) Port : pipeline::PortFrameCounters {
    pipeline::Counter denied, kernel_drops;
  };
  explicit UdpIoCounters(size_t ports) : per_port(ports) {}
  std::deque<Port> per_port;
  pipeline::Counter read_errors, dropped, unread, filtered, over_client_rate;
  LogLimiter drop_log, denied_log, read_error_log, dropped_log, unread_log, over_rate_log;
};

class SyslogUdpProbe {
 public:
  SyslogUdpProbe(std::string source_name, size_t ports, int io_threads) : source_name_(std::move(source_name)) {
    for (int i = 0; i < io_threads; ++i) io_.emplace_back(ports);
  }
  UdpIoCounters& io(int index) { return io_[static_cast<size_t>(index)]; }
  void set_ports(std::vector<uint16_t> ports) { bound_ports_ = std::move(ports); }

  // The kernel dropped `count` datagrams on this socket for want of room (its SK_MEMINFO_DROPS).
  void kernel_dropped(UdpIoCounters& io, size_t port_index, uint64_t count);
  void denied(UdpIoCounters& io, size_t port_index, const std::string& peer);
  // A datagram of a client over its budget (maxEventsPerSecondPerClient): dropped, counted, logged.
  void over_client_rate(UdpIoCounters& io, const std::string& peer);
  void watch_budgets(const pipeline::ClientBudgets* budgets) { budgets_ = budgets; }
  void read_failed(UdpIoCounters& io, int error);
  void dropped_at_shutdown(UdpIoCounters& io, uint64_t events, const std::string& channel);
  // At stop, after the last read: datagrams still queued on the sockets, which close.
  void unread_at_shutdown(UdpIoCounters& io, uint64_t datagrams);

  SyslogUdpCounters counters() const;
  SourceCounters source_counters() const;
  void write_metrics(MetricsWriter& writer) const;

 private:
  const std::string source_name_;
  std::vector<uint16_t> bound_ports_;
  std::deque<UdpIoCounters> io_;
  const pipeline::ClientBudgets* budgets_ = nullptr;  // for the gauge of clients held (null: no limit)
};

}  // namespace sluice::syslog_udp
