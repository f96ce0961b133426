#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/api/channel.h"
#include "agent/api/listener_pool.h"
#include "agent/api/metrics_writer.h"

namespace sluice {

// What every source counts, for the agent's account at shutdown; a source's own metrics are
// written by its probe (write_metrics).
struct SourceCounters {
  uint64_t events_received = 0;
  uint64_t bytes_received = 0;
  uint64_t frames_cut = 0;                   // partial frames the agent cut (shutdown, idleTimeout): Incomplete
  uint64_t events_filtered = 0;              // dropped by the source's interceptors (regex_filter)
  uint64_t events_dropped_at_shutdown = 0;   // read, but not put into a channel by the deadline
  uint64_t events_unrouted = 0;              // the selector chose no channel for them
  uint64_t optional_copies_dropped = 0;      // copies an optional channel had no room for
  uint64_t bytes_unread_at_shutdown = 0;     // delivered by senders, still unread at the grace's end
  uint64_t connections_cut_at_shutdown = 0;  // closed at the grace's end before their sender closed
  uint64_t events_refused = 0;               // answered "not now" (Avro's FAILED): their senders keep them

  SourceCounters& operator+=(const SourceCounters& c) {
    events_received += c.events_received;
    bytes_received += c.bytes_received;
    frames_cut += c.frames_cut;
    events_filtered += c.events_filtered;
    events_dropped_at_shutdown += c.events_dropped_at_shutdown;
    events_unrouted += c.events_unrouted;
    optional_copies_dropped += c.optional_copies_dropped;
    bytes_unread_at_shutdown += c.bytes_unread_at_shutdown;
    connections_cut_at_shutdown += c.connections_cut_at_shutdown;
    events_refused += c.events_refused;
    return *this;
  }
};

// Lifecycle: constructed (config validated) → start() (binds, may throw ConfigError, e.g. a
// port in use) → stop(deadline) (stops accepting and reading; everything already read is in
// the channels when it returns, unless the channels stay full past the deadline: then the
// rest is counted and logged as dropped at shutdown). Called from the agent's main thread.
class Source {
 public:
  virtual ~Source() = default;
  virtual const std::string& name() const = 0;
  virtual void start() = 0;
  virtual void stop(Deadline deadline) = 0;
  // Begins stop(deadline) without waiting for it, so that several sources drain side by side;
  // stop() then finishes it. A source that stops at once need not have it.
  virtual void request_stop(Deadline /*deadline*/) {}
  // A reload's stop, which must not lose what a shutdown would not: let go of the source's ports
  // (by `ports_by`, so that a new source may take them), then drain in the background with no
  // deadline — a full channel is waited for as while running, never given up on. Returns false
  // if the source cannot (the agent then calls stop(deadline)). stop(deadline) afterwards bounds
  // what is left (the agent stopping); wait_retired() tells when it is done by itself.
  virtual bool retire(Deadline /*ports_by*/) { return false; }
  // After retire(): true once everything the source read is in its channels (or counted), at
  // the latest by `deadline`. stop() then returns at once.
  virtual bool wait_retired(Deadline /*deadline*/) { return true; }
  // A reload's hand-over of listening sockets (listener_pool.h), for sources that listen: the
  // agent's pool, the keys of the source's listeners (from its settings, before it starts), and
  // binding now, into the pool, each listener whose key is not in `handed_over` (a port in
  // `freed` that is in use is left to bind at start: a source that goes holds it). Throws
  // config::ConfigError when one cannot be bound.
  virtual void use_listener_pool(std::shared_ptr<ListenerPool> /*pool*/) {}
  virtual std::vector<std::string> listener_keys() const { return {}; }
  virtual void reserve_listeners(const std::set<std::string>& /*handed_over*/, const std::set<uint16_t>& /*freed*/) {}
  // TCP ports actually listened on (port 0 resolved), for the ready file and tests.
  virtual std::vector<uint16_t> listening_ports() const { return {}; }
  // Totals so far, summed over the source's threads; any thread may call these.
  virtual SourceCounters counters() const = 0;
  // Every metric of the source, Prometheus families and Flume fields (MetricsWriter).
  virtual void write_metrics(MetricsWriter& writer) const = 0;
  // SIGHUP: read credentials (certificates, keys) again, keeping established connections; on an
  // error keep the old ones and log it. From the agent's main thread, while the source runs.
  virtual void reload_credentials() {}
  // Why the source needs every sink of its channels to commit only after delivery (RELP's
  // ackAfter = kafka answers senders on commit): the property that asks it, or empty. The agent
  // refuses a topology where a sink would not.
  virtual std::string_view needs_delivered_commits() const { return {}; }
  // The most memory the source can hold (memory_bound.h): its io threads' buffers, and what each
  // connection it admits can make it keep. Its events, once put, are the channels'.
  virtual uint64_t memory_bound() const = 0;
  // The largest event it makes: its frame and what parsing adds (a composed body, client names).
  virtual uint64_t max_event_bytes() const = 0;
  // The largest batch it puts (its batchSize of the largest events).
  virtual uint64_t max_batch_bytes() const = 0;
  // The headers its events may carry beside their parsed fields (interceptor.h headers_made());
  // nullopt: any name.
  virtual std::optional<std::vector<std::string>> headers_made() const { return std::nullopt; }
};

}  // namespace sluice
