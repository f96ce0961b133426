#pragma once
// What a stream source counts and logs, and the metrics it writes. Counting is per io
// thread (IoCounters: written by its thread alone, so the hot counters share no cache line
// across threads) and summed when read; each outcome worth a log line is one call that counts
// it and writes the line, rate-limited per source, with the client's address only in the log
// (never in a label).

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "agent/api/log_limiter.h"
#include "agent/api/metrics_writer.h"
#include "agent/api/source.h"
#include "sources/net/stream_protocol.h"
#include "sources/net/stream_settings.h"
#include "sources/net/tls_context.h"
#include "sources/pipeline/source_counters.h"

namespace sluice::net {

using pipeline::Counter;
using pipeline::PortFrameCounters;
using pipeline::PortFrameTotals;

// One port's totals: what every syslog source counts (source_counters.h), and a stream's own.
struct PortCounters : PortFrameTotals {
  uint64_t cut = 0;            // partial frames cut by the agent closing the connection
  uint64_t octet_counted = 0;  // frames that came RFC 6587 octet-counted
};

struct StreamCounters {
  uint64_t events_received = 0;
  uint64_t bytes_received = 0;
  uint64_t events_invalid = 0;    // no valid syslog header: kept whole, status Invalid
  uint64_t events_truncated = 0;  // longer than eventSize: cut, status Incomplete
  uint64_t frames_cut = 0;        // partial frames the agent cut (shutdown, idleTimeout): Incomplete
  uint64_t blank_lines = 0;
  uint64_t events_invalid_utf8 = 0;
  uint64_t connections_accepted = 0;
  uint64_t connections_idle_closed = 0;        // by idleTimeout
  uint64_t connections_aged = 0;               // asked to reconnect by maxConnectionAge
  uint64_t client_holds = 0;                   // times a connection waited for its client's budget
  uint64_t clients_held = 0;                   // now: clients over their budget
  uint64_t connections_aged_lingering = 0;     // now: ... whose senders have not closed for 10 s
  uint64_t connections_closed = 0;             // includes refused ones
  uint64_t connections_refused_denied = 0;     // by the allow/deny lists
  uint64_t connections_refused_limit = 0;      // over maxConnections
  uint64_t connections_refused_proxy = 0;      // proxyProtocol: no valid PROXY header
  uint64_t connections_refused_untrusted = 0;  // proxyProtocol: a peer not in proxyTrustedFrom
  uint64_t accept_errors = 0;
  uint64_t read_errors = 0;
  uint64_t events_dropped_at_shutdown = 0;
  uint64_t events_filtered = 0;                               // by the source's interceptors
  uint64_t bytes_unread_at_shutdown = 0;                      // delivered by senders, still unread at the grace's end
  uint64_t connections_cut_at_shutdown = 0;                   // closed at the grace's end, before their sender's FIN
  uint64_t tls_handshakes = 0;                                // completed and admitted
  uint64_t tls_reloads_applied = 0, tls_reloads_refused = 0;  // the TLS files read again (watch, SIGHUP)
  std::array<uint64_t, std::size(kTlsFailures)> tls_failures{};  // refused, by TlsFailure
  uint64_t tls_handshaking = 0;                                  // now: handshakes in progress (ssl.maxHandshakes)
  uint64_t tls_awaiting_slot = 0;  // now: connections waiting, unread, for a handshake slot
  // A protocol that acknowledges (RELP, stream_protocol.h):
  uint64_t events_acknowledged = 0;  // replies sent for events that were done downstream
  uint64_t protocol_errors = 0;      // sessions ended because their stream was not the protocol
  uint64_t events_refused_full = 0;  // of calls answered "not now" (Avro's FAILED): a channel stayed full
  uint64_t events_refused_held = 0;  // of them, already in another channel: stored again when resent
  // By a protocol's kind of call (Avro: append, appendBatch): received, answered as given, answered failed.
  std::array<uint64_t, 2> calls_received{}, calls_answered{}, calls_failed{};
  uint64_t reading_paused = 0;         // times a connection's unsent replies paused its reading
  uint64_t lookups_timed_out = 0;      // reverse lookups not answered within hostnameLookupTimeout
  uint64_t lookups_skipped = 0;        // not started: too many waiting on this io thread
  uint64_t lookups_stopped = 0;        // still waiting when the source stopped
  std::vector<PortCounters> per_port;  // the event counters above, per port
};

// One io thread's counters and log limiters (a line per 10 s per io thread, as each thread's
// lines are about its own connections). Cache-line aligned: no two threads write one line.
struct alignas(64) IoCounters {
  struct alignas(64) Port : PortFrameCounters {
    Counter cut, octet_counted;
  };
  explicit IoCounters(size_t ports) : per_port(ports) {}
  std::deque<Port> per_port;  // per configured port, in the source's order
  Counter accepted, closed, accept_errors, read_errors, dropped, unread_at_shutdown, cut_at_shutdown, refused_denied,
      refused_limit, refused_proxy, refused_untrusted, idle_closed, aged, client_holds, tls_handshakes, acknowledged,
      protocol_errors, reading_paused, lookups_timed_out, lookups_skipped, lookups_stopped, filtered, refused_full,
      refused_held;
  std::array<Counter, 2> calls_received, calls_answered, calls_failed;  // StreamCounters' by kind
  std::array<Counter, std::size(kTlsFailures)> tls_failures;
  Counter tls_handshaking, tls_awaiting_slot, aged_lingering;  // gauges: set by the io thread as they change
  LogLimiter refusal_log, accept_error_log, idle_log, aged_log, lingering_log, hold_log, truncation_log, unread_log,
      dropped_log, tls_log, protocol_log, paused_log, lookup_log, full_log;
};

// Why a connection went on with its address for a name (clientHostnameHeader).
enum class LookupOutcome { timed_out, skipped, stopped };

// Why a connection was closed before any of its data was read.
enum class Refusal { denied, limit, proxy_header, proxy_untrusted };

class StreamProbe {
 public:
  // `protocol`: the name of a protocol that acknowledges ("RELP"), or empty for plain syslog.
  StreamProbe(std::string source_name, const StreamSettings& config, int io_threads, std::string protocol = "")
      : source_name_(std::move(source_name)),
        event_size_(config.event_size),
        idle_timeout_ms_(config.idle_timeout.count()),
        max_connection_age_ms_(config.max_connection_age.count()),
        tls_(config.ssl),
        proxy_(config.proxy_protocol != ProxyProtocol::none),
        lookups_(!config.client_hostname_header.empty()),
        lookup_timeout_ms_(config.hostname_lookup_timeout.count()),
        protocol_(std::move(protocol)) {
    for (int i = 0; i < io_threads; ++i) io_.emplace_back(config.ports.size());
  }

  // The counters of io thread `index`.
  IoCounters& io(int index) { return io_[static_cast<size_t>(index)]; }
  // After the listeners are bound, before the io threads run: the ports' numbers, for labels.
  void set_ports(std::vector<uint16_t> ports) { bound_ports_ = std::move(ports); }

  // The frames one read (or the stream's end) gave on port `port_index`; a frame cut at
  // eventSize is logged, naming the sender (peer(), asked only then).
  template <class PeerText>
  void framed(IoCounters& io, size_t port_index, const ReadTally& framed, uint16_t port, PeerText&& peer) {
    IoCounters::Port& p = io.per_port[port_index];
    p.events.add(framed.frames);
    p.truncated.add(framed.truncated);
    p.cut.add(framed.cut);
    p.blank_lines.add(framed.blank_lines);
    p.octet_counted.add(framed.octet_counted);
    p.invalid.add(framed.invalid);
    p.invalid_utf8.add(framed.invalid_utf8);
    if (framed.filtered) io.filtered.add(framed.filtered);
    if (!framed.truncated) return;
    if (auto note = io.truncation_log.next()) log_truncated(framed.truncated, peer(), port, *note);
  }
  // Calls the protocol refused with an answer (the session goes on): counted as protocol errors,
  // logged once per 10 s per io thread with the sender and the last reason.
  void calls_refused(IoCounters& io, const std::string& peer, uint64_t calls, const std::string& why);
  // Counted and logged (once per 10 s per io thread) with the client's address and, for a
  // PROXY header, what was wrong with it. The caller counts the connection's close.
  void refused(IoCounters& io, Refusal why, const std::string& peer, std::string_view detail = {});
  void accept_failed(IoCounters& io, int error);
  void idle_closed(IoCounters& io, uint64_t connections);
  // maxConnectionAge: `connections` asked to reconnect (logged once per 10 s per io thread).
  void aged(IoCounters& io, uint64_t connections);
  // ... of which `lingering` have not closed 10 s after (senders that do not watch for our FIN:
  // read on, nothing cut; logged with one of them).
  void aged_lingering(IoCounters& io, uint64_t lingering, const std::string& peer);
  // maxEventsPerSecondPerClient: a connection of `peer` not read for `wait` (its client's budget).
  void client_held(IoCounters& io, const std::string& peer, std::chrono::milliseconds wait);
  // The clients' budgets, for the gauge of those held (null: no limit).
  void watch_budgets(const pipeline::ClientBudgets* budgets) { budgets_ = budgets; }
  // The drain's grace ended before the sender closed its side: the connection is cut, with
  // `unread` bytes still in our buffers (lost, and counted). Bytes still on their way to us (in
  // the sender's send queue, being retransmitted) are beyond any count here.
  void cut_at_shutdown(IoCounters& io, uint64_t unread, const std::string& peer);
  void dropped_at_shutdown(IoCounters& io, uint64_t events, const std::string& channel);
  void tls_established(IoCounters& io) { io.tls_handshakes.add(1); }
  // The TLS files read again (changed on disk, or SIGHUP): applied (serving a certificate that
  // expires at `not_after`), or refused with `error` (the running ones stay). Counted and logged.
  void tls_reloaded(const std::string& why, const std::string& error, int64_t not_after);
  void tls_loaded(int64_t not_after) { tls_not_after_.store(not_after, std::memory_order_relaxed); }
  // A TLS client refused (or its handshake broken): counted by reason, logged with its address and
  // certificate subject.
  void tls_refused(IoCounters& io, TlsFailure why, const std::string& peer, const std::string& subject);

  // Replies sent: `events` answered done; `released` what the answers were (AckQueue::Released).
  void acknowledged(IoCounters& io, uint64_t events, const AckQueue::Released& released) {
    io.acknowledged.add(events);
    for (size_t k = 0; k < 2; ++k) {
      if (released.answered[k]) io.calls_answered[k].add(released.answered[k]);
      if (released.failed[k]) io.calls_failed[k].add(released.failed[k]);
    }
  }
  void calls_received(IoCounters& io, const std::array<uint64_t, 2>& calls) {
    for (size_t k = 0; k < 2; ++k)
      if (calls[k]) io.calls_received[k].add(calls[k]);
  }
  // A channel stayed full past refuse_when_full_after: a batch of `events` (whole calls, those
  // interceptors filtered out not among them) is answered "not now", `held` of them already in
  // another channel (counted even if their connection is gone by the time the answers would go;
  // logged once per 10 s per io thread).
  void refused_full(IoCounters& io, uint64_t events, uint64_t held, const std::string& channel);
  // A connection read with its address as its name: its lookup timed out, or was not started.
  void lookup_given_up(IoCounters& io, LookupOutcome why, const std::string& ip);
  // A connection whose replies its sender does not read: its reading paused (counted, logged).
  void reading_paused(IoCounters& io, const std::string& peer);
  // A session whose stream broke the protocol: counted, logged with the sender and why.
  void protocol_broken(IoCounters& io, const std::string& peer, const std::string& why);

  StreamCounters counters() const;
  SourceCounters source_counters() const;
  void write_metrics(MetricsWriter& writer) const;

 private:
  void log_truncated(uint64_t frames, const std::string& peer, uint16_t port, const std::string& note);

  const std::string source_name_;
  const size_t event_size_;              // for the truncation line
  const int64_t idle_timeout_ms_;        // for the idle line
  const int64_t max_connection_age_ms_;  // for the aged line
  const bool tls_;                       // the TLS families only for a TLS source
  const bool proxy_;                     // the proxy_header refusals only behind a PROXY-protocol balancer
  const bool lookups_;                   // the lookup families only with clientHostnameHeader
  const int64_t lookup_timeout_ms_;
  const std::string protocol_;  // the acknowledgement families only for such a protocol
  std::vector<uint16_t> bound_ports_;
  std::deque<IoCounters> io_;  // one per io thread (a deque: atomics do not move)
  const pipeline::ClientBudgets* budgets_ = nullptr;
  std::atomic<uint64_t> tls_reloads_applied_{0}, tls_reloads_refused_{0};
  std::atomic<int64_t> tls_not_after_{0};
};

}  // namespace sluice::net
