#pragma once
// Time limits for the waits that must end at shutdown. A Deadline is a point in time; a
// StopDeadline is one that is not known yet: "never" until stop() sets it, from another
// thread, and re-read by every loop that waits on it (a wait must not keep the value it saw
// when it began: that is how a full queue once held a stopping agent for ever).

#include <atomic>
#include <chrono>

namespace sluice {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

class StopDeadline {
 public:
  void set(Deadline deadline) { ns_.store(deadline.time_since_epoch().count(), std::memory_order_release); }
  Deadline get() const { return Deadline(Clock::duration(ns_.load(std::memory_order_acquire))); }
  bool is_set() const { return get() != Deadline::max(); }
  bool passed(Clock::time_point now = Clock::now()) const { return now >= get(); }

 private:
  std::atomic<Clock::rep> ns_{Deadline::max().time_since_epoch().count()};
};

}  // namespace sluice
