#pragma once
// Rate-limits a repeated log line: the first occurrence is logged at once, later ones at
// most once per interval, each saying how many were suppressed in between. Every occurrence
// still bumps its counter elsewhere; only the log line is limited. Thread-safe.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace sluice {

class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::milliseconds interval = std::chrono::seconds(10)) : interval_(interval) {}

  // True when this occurrence should be logged; `suppressed` then holds how many were not.
  bool allow(uint64_t& suppressed) {
    std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (logged_once_ && now - last_ < interval_) {
      ++suppressed_;
      return false;
    }
    logged_once_ = true;
    last_ = now;
    suppressed = suppressed_;
    suppressed_ = 0;
    return true;
  }

 private:
  const std::chrono::milliseconds interval_;
  std::mutex mutex_;
  bool logged_once_ = false;
  std::chrono::steady_clock::time_point last_{};
  uint64_t suppressed_ = 0;
};

}  // namespace sluice
