#pragma once
// `sluice top`: a running agent's metrics endpoint as a terminal view, refreshed each interval.

#include <chrono>
#include <string>

namespace sluice::top {

struct TopOptions {
  std::string address = "127.0.0.1:34545";  // the agent's --metrics (host:port or http://host:port/metrics)
  std::chrono::milliseconds interval{1000};
  bool once = false;  // print one view (two scrapes an interval apart) and exit
};

// On a terminal: the full screen, redrawn each interval and on resize, until q or Ctrl-C; an
// agent that cannot be reached is said on the screen and asked again each interval. Not on a
// terminal: one plain view per interval (like top -b). Returns the exit status: 0, or 1 when
// --once could not read the agent.
int run_top(const TopOptions& options);

}  // namespace sluice::top
