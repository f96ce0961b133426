#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "channels/channel.h"

namespace sluice {

struct PortCounters {
  uint16_t port = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;
  uint64_t invalid = 0;
  uint64_t truncated = 0;
  uint64_t cut = 0;            // partial frames cut by the agent closing the connection
  uint64_t blank_lines = 0;
  uint64_t octet_counted = 0;  // frames that came RFC 6587 octet-counted
  uint64_t invalid_utf8 = 0;   // events whose invalid UTF-8 was replaced by U+FFFD
};

struct SourceCounters {
  uint64_t events_received = 0;
  uint64_t bytes_received = 0;
  uint64_t events_invalid = 0;    // no valid syslog header: kept whole, status Invalid
  uint64_t events_truncated = 0;  // longer than eventSize: cut, status Incomplete
  uint64_t frames_cut = 0;        // partial frames the agent cut (shutdown, idleTimeout): Incomplete
  uint64_t blank_lines = 0;
  uint64_t events_invalid_utf8 = 0;
  uint64_t connections_accepted = 0;
  uint64_t connections_idle_closed = 0;     // by idleTimeout
  uint64_t connections_closed = 0;          // includes refused ones
  uint64_t connections_refused_denied = 0;  // by the allow/deny lists
  uint64_t connections_refused_limit = 0;   // over maxConnections
  uint64_t accept_errors = 0;
  uint64_t read_errors = 0;
  uint64_t events_dropped_at_shutdown = 0;
  uint64_t bytes_unread_at_shutdown = 0;  // delivered by senders, still unread at the grace's end
  std::vector<PortCounters> per_port;  // the event counters above, per port
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
  // TCP ports actually listened on (port 0 resolved), for the ready file and tests.
  virtual std::vector<uint16_t> listening_ports() const { return {}; }
  // Totals so far, summed over the source's threads; any thread may call it.
  virtual SourceCounters counters() const = 0;
};

}  // namespace sluice
