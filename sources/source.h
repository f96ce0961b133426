#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "channels/channel.h"

namespace sluice {

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
  // Events read but not put into a channel because the shutdown deadline passed first.
  virtual uint64_t events_dropped_at_shutdown() const = 0;
};

}  // namespace sluice
