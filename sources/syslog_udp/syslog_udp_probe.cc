#include "sources/syslog_udp/syslog_udp_probe.h"

#include <cstring>

#include <spdlog/spdlog.h>

#include "agent/api/metric_names.h"

namespace sluice::syslog_udp {

void SyslogUdpProbe::kernel_dropped(UdpIoCounters& io, size_t port_index, uint64_t count) {
  io.per_port[port_index].kernel_drops.add(count);
  if (auto note = io.drop_log.next())
    spdlog::warn(
        "source {}: the kernel dropped {} datagram(s) on port {} for want of buffer room (UDP has no "
        "backpressure: counted as udp_kernel_drops; raise readBufferSize and net.core.rmem_max){}",
        source_name_, count, port_index < bound_ports_.size() ? bound_ports_[port_index] : 0, *note);
}

void SyslogUdpProbe::denied(UdpIoCounters& io, size_t port_index, const std::string& peer) {
  io.per_port[port_index].denied.add(1);
  if (auto note = io.denied_log.next())
    spdlog::warn("source {}: dropped a datagram from {}: not in allow or in deny{}", source_name_, peer, *note);
}

void SyslogUdpProbe::over_client_rate(UdpIoCounters& io, const std::string& peer) {
  io.over_client_rate.add(1);
  if (auto note = io.over_rate_log.next())
    spdlog::warn(
        "source {}: dropped datagrams from {}: over its budget (maxEventsPerSecondPerClient / "
        "maxBytesPerSecondPerClient; counted as events_over_client_rate){}",
        source_name_, peer, *note);
}

void SyslogUdpProbe::read_failed(UdpIoCounters& io, int error) {
  io.read_errors.add(1);
  if (auto note = io.read_error_log.next())
    spdlog::error("source {}: recvmmsg() failed: {}{}", source_name_, std::strerror(error), *note);
}

void SyslogUdpProbe::dropped_at_shutdown(UdpIoCounters& io, uint64_t events, const std::string& channel) {
  io.dropped.add(events);
  pipeline::log_dropped_at_shutdown(io.dropped_log, source_name_, channel, events);
}

void SyslogUdpProbe::unread_at_shutdown(UdpIoCounters& io, uint64_t datagrams) {
  io.unread.add(datagrams);
  if (auto note = io.unread_log.next())
    spdlog::error(
        "source {}: shutdown: {} datagram(s) still queued on the sockets were not read and are lost "
        "(counted as datagrams_unread_at_shutdown){}",
        source_name_, datagrams, *note);
}

SyslogUdpCounters SyslogUdpProbe::counters() const {
  SyslogUdpCounters c;
  c.per_port =
      pipeline::sum_ports<UdpPortCounters>(bound_ports_, io_, [](UdpPortCounters& to, const UdpIoCounters::Port& from) {
        to.denied += from.denied.get();
        to.kernel_drops += from.kernel_drops.get();
      });
  for (const UdpIoCounters& io : io_) {
    c.read_errors += io.read_errors.get();
    c.events_dropped_at_shutdown += io.dropped.get();
    c.datagrams_unread_at_shutdown += io.unread.get();
    c.events_filtered += io.filtered.get();
    c.events_over_client_rate += io.over_client_rate.get();
  }
  if (budgets_) c.clients_held = budgets_->held(pipeline::monotonic_ns());
  for (const UdpPortCounters& p : c.per_port) {
    c.events_received += p.events;
    c.bytes_received += p.bytes;
    c.events_truncated += p.truncated;
    c.datagrams_denied += p.denied;
    c.kernel_drops += p.kernel_drops;
  }
  return c;
}

SourceCounters SyslogUdpProbe::source_counters() const {
  const SyslogUdpCounters c = counters();
  return {.events_received = c.events_received,
          .bytes_received = c.bytes_received,
          .events_filtered = c.events_filtered,
          .events_dropped_at_shutdown = c.events_dropped_at_shutdown};
}

void SyslogUdpProbe::write_metrics(MetricsWriter& w) const {
  const SyslogUdpCounters c = counters();
  for (const UdpPortCounters& p : c.per_port) {
    pipeline::write_port_frame_families(w, source_name_, p);
    const MetricLabels l{{"source", source_name_}, {"port", std::to_string(p.port)}};
    w.counter(metric_names::kSourceDatagramsDeniedTotal, l, p.denied);
    w.counter(metric_names::kSourceUdpKernelDropsTotal, l, p.kernel_drops);
  }
  const MetricLabels l{{"source", source_name_}};
  w.counter(metric_names::kSourceReadErrorsTotal, l, c.read_errors);
  pipeline::write_filtered_family(w, source_name_, c.events_filtered);
  w.counter(metric_names::kSourceEventsDroppedAtShutdownTotal, l, c.events_dropped_at_shutdown);
  w.counter(metric_names::kSourceDatagramsUnreadAtShutdownTotal, l, c.datagrams_unread_at_shutdown);
  w.counter(metric_names::kSourceEventsOverClientRateTotal, l, c.events_over_client_rate);
  w.gauge(metric_names::kSourceClientsHeld, l, static_cast<double>(c.clients_held));
  w.flume("EventReceivedCount", std::to_string(c.events_received));
  w.flume("EventAcceptedCount", std::to_string(c.events_received - c.events_dropped_at_shutdown - c.events_filtered));
  w.flume("GenericProcessingFail", std::to_string(c.events_dropped_at_shutdown + c.kernel_drops));
}

}  // namespace sluice::syslog_udp
