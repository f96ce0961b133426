#pragma once
// The sending side of sluice-loadgen: `threads` sender threads share `connections` TCP
// connections spread round-robin over the targets. Each thread paces itself with a token
// bucket over chunks of events (never a sleep per event) and writes whole chunks.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::loadgen {

struct Target {
  std::string host;
  uint16_t port;
};
// "host:port" → Target; throws std::invalid_argument.
Target parse_target(const std::string& text);

struct SendOptions {
  std::vector<Target> targets;
  int connections = 4;
  int threads = 0;               // 0: min(connections, 2)
  double rate = 0;               // events/s over all connections; 0 = as fast as possible
  std::chrono::milliseconds ramp{0};  // rise linearly from 0 to rate over this long
  size_t size = 120;             // bytes per event, newline included
  std::chrono::milliseconds duration{10000};
  uint64_t count = 0;            // total events; 0 = until duration
  std::chrono::milliseconds progress_interval{1000};  // 0: no live progress
};

struct ConnectionResult {
  uint32_t id = 0;
  std::string target;
  uint64_t sent = 0;            // events fully written to the socket
  uint64_t possibly_lost = 0;   // events in a write that failed
  std::string error;
};

struct SendResult {
  std::vector<ConnectionResult> connections;
  uint64_t sent = 0;
  double seconds = 0;
  double cpu_seconds = 0;  // the sender's own user + system time
  double rate() const { return seconds > 0 ? sent / seconds : 0; }
  bool ok() const;
  std::string to_json() const;
};

// Runs to completion (count reached or duration over). Prints progress to stderr.
SendResult send_events(const SendOptions& options);

}  // namespace sluice::loadgen
