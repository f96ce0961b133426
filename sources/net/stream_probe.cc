#include "sources/net/stream_probe.h"

#include <cstring>

#include <spdlog/spdlog.h>

#include "agent/api/metric_names.h"

namespace sluice::net {

void StreamProbe::refused(IoCounters& io, Refusal why, const std::string& peer, std::string_view detail) {
  std::string reason;
  switch (why) {
    case Refusal::denied:
      io.refused_denied.add(1);
      reason = "not in allow or in deny";
      break;
    case Refusal::limit:
      io.refused_limit.add(1);
      reason = "maxConnections reached";
      break;
    case Refusal::proxy_header:
      io.refused_proxy.add(1);
      reason = "proxyProtocol: " + std::string(detail);
      break;
    case Refusal::proxy_untrusted:
      io.refused_untrusted.add(1);
      reason = "proxyProtocol: not a balancer in proxyTrustedFrom (its PROXY header would not be believed)";
      break;
  }
  if (auto note = io.refusal_log.next())
    spdlog::warn("source {}: refused a connection from {}: {}{}", source_name_, peer, reason, *note);
}

void StreamProbe::accept_failed(IoCounters& io, int error) {
  io.accept_errors.add(1);
  if (auto note = io.accept_error_log.next())
    spdlog::error("source {}: accept() failed: {}{} ({} accept errors so far){}", source_name_, std::strerror(error),
                  error == EMFILE ? "; raise the file descriptor limit (LimitNOFILE / ulimit -n)" : "",
                  counters().accept_errors, *note);
}

void StreamProbe::idle_closed(IoCounters& io, uint64_t connections) {
  io.idle_closed.add(connections);
  if (auto note = io.idle_log.next())
    spdlog::info("source {}: closed {} connection(s) idle for {} ms (idleTimeout){}", source_name_, connections,
                 idle_timeout_ms_, *note);
}

void StreamProbe::aged(IoCounters& io, uint64_t connections) {
  io.aged.add(connections);
  if (auto note = io.aged_log.next())
    spdlog::info("source {}: asked {} connection(s) older than {} ms to reconnect (maxConnectionAge){}", source_name_,
                 connections, max_connection_age_ms_, *note);
}

void StreamProbe::aged_lingering(IoCounters& io, uint64_t lingering, const std::string& peer) {
  const uint64_t before = io.aged_lingering.get();
  io.aged_lingering.value.store(lingering, std::memory_order_relaxed);
  if (lingering <= before) return;
  if (auto note = io.lingering_log.next())
    spdlog::warn(
        "source {}: {} connection(s) asked to reconnect by maxConnectionAge still open after 10 s (e.g. from {}): "
        "their senders do not close on our FIN; they are read on, nothing is cut, but they cannot be moved{}",
        source_name_, lingering, peer, *note);
}

void StreamProbe::client_held(IoCounters& io, const std::string& peer, std::chrono::milliseconds wait) {
  io.client_holds.add(1);
  if (auto note = io.hold_log.next())
    spdlog::warn(
        "source {}: client {} is over its budget (maxEventsPerSecondPerClient / maxBytesPerSecondPerClient): its "
        "connection is not read for {} ms (TCP pushes back on it; nothing is dropped){}",
        source_name_, peer, wait.count(), *note);
}

void StreamProbe::tls_reloaded(const std::string& why, const std::string& error, int64_t not_after) {
  if (!error.empty()) {
    tls_reloads_refused_.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("source {}: TLS files not reloaded ({}), the ones loaded before stay in use: {}", source_name_, why,
                  error);
    return;
  }
  tls_reloads_applied_.fetch_add(1, std::memory_order_relaxed);
  tls_loaded(not_after);
  spdlog::info("source {}: TLS certificate, key, CA and CRL reloaded ({}); new connections use them", source_name_,
               why);
}

void StreamProbe::calls_refused(IoCounters& io, const std::string& peer, uint64_t calls, const std::string& why) {
  io.protocol_errors.add(calls);
  if (auto note = io.protocol_log.next())
    spdlog::warn("source {}: {} call(s) from {} refused: {}; the sender sends them again{}", source_name_, calls, peer,
                 why, *note);
}

void StreamProbe::refused_full(IoCounters& io, uint64_t events, uint64_t held, const std::string& channel) {
  io.refused_full.add(events);
  io.refused_held.add(held);
  if (auto note = io.full_log.next())
    spdlog::warn(
        "source {}: channel {} stayed full: {} events answered FAILED (their senders send them again, or "
        "fail over); {} of them another channel had taken, which may so be stored twice{}",
        source_name_, channel, events, held, *note);
}

void StreamProbe::protocol_broken(IoCounters& io, const std::string& peer, const std::string& why) {
  io.protocol_errors.add(1);
  if (auto note = io.protocol_log.next())
    spdlog::warn("source {}: {} session from {} ended: {}; the sender resends what it has no reply for{}", source_name_,
                 protocol_, peer, why, *note);
}

void StreamProbe::lookup_given_up(IoCounters& io, LookupOutcome why, const std::string& ip) {
  std::string reason;
  switch (why) {
    case LookupOutcome::timed_out:
      io.lookups_timed_out.add(1);
      reason =
          "the resolver did not answer within hostnameLookupTimeout (" + std::to_string(lookup_timeout_ms_) + " ms)";
      break;
    case LookupOutcome::skipped:
      io.lookups_skipped.add(1);
      reason = "64 lookups already wait on this io thread (is the resolver down?)";
      break;
    case LookupOutcome::stopped:
      io.lookups_stopped.add(1);
      reason = "the source stopped before the resolver answered";
      break;
  }
  if (auto note = io.lookup_log.next())
    spdlog::warn("source {}: no host name for {}: {}; its events carry the address (clientHostnameHeader){}",
                 source_name_, ip, reason, *note);
}

void StreamProbe::reading_paused(IoCounters& io, const std::string& peer) {
  io.reading_paused.add(1);
  if (auto note = io.paused_log.next())
    spdlog::warn(
        "source {}: {} does not read our replies (over 256 KiB unsent): its connection is not read until they "
        "go out{}",
        source_name_, peer, *note);
}

void StreamProbe::cut_at_shutdown(IoCounters& io, uint64_t unread, const std::string& peer) {
  io.cut_at_shutdown.add(1);
  io.unread_at_shutdown.add(unread);
  if (auto note = io.unread_log.next())
    spdlog::error(
        "source {}: shutdown grace over before {} closed its side: connection cut with {} bytes unread (lost, counted "
        "as bytes_unread_at_shutdown); what it still had on the way is lost with it{}",
        source_name_, peer, unread, *note);
}

void StreamProbe::dropped_at_shutdown(IoCounters& io, uint64_t events, const std::string& channel) {
  io.dropped.add(events);
  pipeline::log_dropped_at_shutdown(io.dropped_log, source_name_, channel, events);
}

void StreamProbe::tls_refused(IoCounters& io, TlsFailure why, const std::string& peer, const std::string& subject) {
  io.tls_failures[static_cast<size_t>(why)].add(1);
  if (auto note = io.tls_log.next())
    spdlog::warn("source {}: TLS connection from {} refused: {} (certificate: {}){}", source_name_, peer,
                 failure_label(why), subject, *note);
}

// A sender hit the per-connection limit (eventSize): one line per 10 s, naming it.
void StreamProbe::log_truncated(uint64_t frames, const std::string& peer, uint16_t port, const std::string& note) {
  spdlog::warn(
      "source {}: {} frame(s) from {} on port {} longer than eventSize {}: cut there, marked Incomplete "
      "and counted (frames_truncated){}",
      source_name_, frames, peer, port, event_size_, note);
}

StreamCounters StreamProbe::counters() const {
  StreamCounters c;
  c.per_port = pipeline::sum_ports<PortCounters>(bound_ports_, io_, [](PortCounters& to, const IoCounters::Port& from) {
    to.cut += from.cut.get();
    to.octet_counted += from.octet_counted.get();
  });
  for (const IoCounters& io : io_) {
    c.connections_accepted += io.accepted.get();
    c.connections_idle_closed += io.idle_closed.get();
    c.connections_aged += io.aged.get();
    c.client_holds += io.client_holds.get();
    c.connections_aged_lingering += io.aged_lingering.get();
    c.connections_closed += io.closed.get();
    c.accept_errors += io.accept_errors.get();
    c.read_errors += io.read_errors.get();
    c.events_dropped_at_shutdown += io.dropped.get();
    c.events_filtered += io.filtered.get();
    c.bytes_unread_at_shutdown += io.unread_at_shutdown.get();
    c.connections_cut_at_shutdown += io.cut_at_shutdown.get();
    c.connections_refused_denied += io.refused_denied.get();
    c.connections_refused_limit += io.refused_limit.get();
    c.connections_refused_proxy += io.refused_proxy.get();
    c.connections_refused_untrusted += io.refused_untrusted.get();
    c.tls_handshakes += io.tls_handshakes.get();
    c.tls_handshaking += io.tls_handshaking.get();
    c.tls_awaiting_slot += io.tls_awaiting_slot.get();
    c.events_acknowledged += io.acknowledged.get();
    c.protocol_errors += io.protocol_errors.get();
    c.events_refused_full += io.refused_full.get();
    c.events_refused_held += io.refused_held.get();
    for (size_t k = 0; k < 2; ++k) {
      c.calls_received[k] += io.calls_received[k].get();
      c.calls_answered[k] += io.calls_answered[k].get();
      c.calls_failed[k] += io.calls_failed[k].get();
    }
    c.reading_paused += io.reading_paused.get();
    c.lookups_timed_out += io.lookups_timed_out.get();
    c.lookups_skipped += io.lookups_skipped.get();
    c.lookups_stopped += io.lookups_stopped.get();
    for (size_t i = 0; i < c.tls_failures.size(); ++i) c.tls_failures[i] += io.tls_failures[i].get();
  }
  if (budgets_) c.clients_held = budgets_->held(pipeline::monotonic_ns());
  c.tls_reloads_applied = tls_reloads_applied_.load(std::memory_order_relaxed);
  c.tls_reloads_refused = tls_reloads_refused_.load(std::memory_order_relaxed);
  for (const PortCounters& port : c.per_port) {  // the source's event totals are the ports' sums
    c.events_received += port.events;
    c.bytes_received += port.bytes;
    c.events_invalid += port.invalid;
    c.events_truncated += port.truncated;
    c.frames_cut += port.cut;
    c.blank_lines += port.blank_lines;
    c.events_invalid_utf8 += port.invalid_utf8;
  }
  return c;
}

SourceCounters StreamProbe::source_counters() const {
  const StreamCounters c = counters();
  return {.events_received = c.events_received,
          .bytes_received = c.bytes_received,
          .frames_cut = c.frames_cut,
          .events_filtered = c.events_filtered,
          .events_dropped_at_shutdown = c.events_dropped_at_shutdown,
          .bytes_unread_at_shutdown = c.bytes_unread_at_shutdown,
          .connections_cut_at_shutdown = c.connections_cut_at_shutdown,
          .events_refused = c.events_refused_full};
}

void StreamProbe::write_metrics(MetricsWriter& w) const {
  const StreamCounters c = counters();
  const std::string& n = source_name_;
  for (const PortCounters& p : c.per_port) {
    pipeline::write_port_frame_families(w, n, p);
    const MetricLabels l{{"source", n}, {"port", std::to_string(p.port)}};
    w.counter(metric_names::kSourceFramesCutTotal, l, p.cut);
    w.counter(metric_names::kSourceFramesOctetCountedTotal, l, p.octet_counted);
  }
  const MetricLabels l{{"source", n}};
  const auto open = static_cast<double>(c.connections_accepted - c.connections_closed);
  w.gauge(metric_names::kSourceConnections, l, open);
  w.counter(metric_names::kSourceConnectionsAcceptedTotal, l, c.connections_accepted);
  w.counter(metric_names::kSourceConnectionsRefusedTotal, {{"source", n}, {"reason", "denied"}},
            c.connections_refused_denied);
  w.counter(metric_names::kSourceConnectionsRefusedTotal, {{"source", n}, {"reason", "limit"}},
            c.connections_refused_limit);
  if (proxy_) {
    w.counter(metric_names::kSourceConnectionsRefusedTotal, {{"source", n}, {"reason", "proxy_header"}},
              c.connections_refused_proxy);
    w.counter(metric_names::kSourceConnectionsRefusedTotal, {{"source", n}, {"reason", "proxy_untrusted"}},
              c.connections_refused_untrusted);
  }
  w.counter(metric_names::kSourceConnectionsIdleClosedTotal, l, c.connections_idle_closed);
  w.counter(metric_names::kSourceConnectionsAgedTotal, l, c.connections_aged);
  w.gauge(metric_names::kSourceConnectionsAgedLingering, l, static_cast<double>(c.connections_aged_lingering));
  w.gauge(metric_names::kSourceClientsHeld, l, static_cast<double>(c.clients_held));
  w.counter(metric_names::kSourceClientHoldsTotal, l, c.client_holds);
  w.counter(metric_names::kSourceAcceptErrorsTotal, l, c.accept_errors);
  w.counter(metric_names::kSourceReadErrorsTotal, l, c.read_errors);
  pipeline::write_filtered_family(w, n, c.events_filtered);
  w.counter(metric_names::kSourceEventsDroppedAtShutdownTotal, l, c.events_dropped_at_shutdown);
  w.counter(metric_names::kSourceBytesUnreadAtShutdownTotal, l, c.bytes_unread_at_shutdown);
  w.counter(metric_names::kSourceConnectionsCutAtShutdownTotal, l, c.connections_cut_at_shutdown);
  if (lookups_)
    for (const auto& [reason, count] : {std::pair<const char*, uint64_t>{"timeout", c.lookups_timed_out},
                                        {"skipped", c.lookups_skipped},
                                        {"stopped", c.lookups_stopped}})
      w.counter(metric_names::kSourceHostnameLookupsGivenUpTotal, {{"source", n}, {"reason", reason}}, count);
  if (tls_) {
    w.counter(metric_names::kSourceTlsHandshakesTotal, l, c.tls_handshakes);
    w.counter(metric_names::kSourceTlsReloadsTotal, {{"source", n}, {"result", "applied"}}, c.tls_reloads_applied);
    w.counter(metric_names::kSourceTlsReloadsTotal, {{"source", n}, {"result", "refused"}}, c.tls_reloads_refused);
    w.gauge(metric_names::kSourceTlsCertificateExpiryTimestampSeconds, l,
            static_cast<double>(tls_not_after_.load(std::memory_order_relaxed)));
    w.gauge(metric_names::kSourceTlsHandshakesInProgress, l, static_cast<double>(c.tls_handshaking));
    w.gauge(metric_names::kSourceTlsConnectionsAwaitingHandshake, l, static_cast<double>(c.tls_awaiting_slot));
    for (TlsFailure why : kTlsFailures)
      w.counter(metric_names::kSourceTlsHandshakeFailuresTotal,
                {{"source", n}, {"reason", std::string(failure_label(why))}}, c.tls_failures[static_cast<size_t>(why)]);
  }
  if (!protocol_.empty()) {
    w.counter(metric_names::kSourceEventsAcknowledgedTotal, l, c.events_acknowledged);
    w.counter(metric_names::kSourceReadsPausedTotal, l, c.reading_paused);
    w.counter(metric_names::kSourceProtocolErrorsTotal, l, c.protocol_errors);
    w.counter(metric_names::kSourceEventsRefusedFullTotal, l, c.events_refused_full);
    w.counter(metric_names::kSourceEventsRefusedHeldTotal, l, c.events_refused_held);
  }
  // Flume's reporting of a source.
  w.flume("EventReceivedCount", std::to_string(c.events_received));
  w.flume("EventAcceptedCount",
          std::to_string(c.events_received - c.events_dropped_at_shutdown - c.events_filtered - c.events_refused_full));
  // Flume's AvroSource's calls (0 for the others): an append or appendBatch received, and
  // accepted (answered OK).
  w.flume("AppendReceivedCount", std::to_string(c.calls_received[0]));
  w.flume("AppendAcceptedCount", std::to_string(c.calls_answered[0]));
  w.flume("AppendBatchReceivedCount", std::to_string(c.calls_received[1]));
  w.flume("AppendBatchAcceptedCount", std::to_string(c.calls_answered[1]));
  w.flume("OpenConnectionCount", std::to_string(c.connections_accepted - c.connections_closed));
  w.flume("EventReadFail", std::to_string(c.events_invalid));
  w.flume("GenericProcessingFail", std::to_string(c.events_dropped_at_shutdown));
}

}  // namespace sluice::net
