#pragma once
// Rate-limits a repeated log line: the first occurrence is logged at once, later ones at
// most once per interval, each saying how many were suppressed in between. Every occurrence
// still bumps its counter elsewhere; only the log line is limited. Thread-safe.
//
//   if (auto note = refusal_log_.next()) spdlog::warn("refused {}{}", peer, *note);

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace sluice {

class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::milliseconds interval = std::chrono::seconds(10)) : interval_(interval) {}

  // When this occurrence should be logged: the note to end its line with, " [N similar lines
  // suppressed]" (or "" when none were); nothing when it should not be logged.
  std::optional<std::string> next() {
    uint64_t suppressed = 0;
    {
      std::lock_guard lock(mutex_);
      const auto now = std::chrono::steady_clock::now();
      if (logged_once_ && now - last_ < interval_) {
        ++suppressed_;
        return std::nullopt;
      }
      logged_once_ = true;
      last_ = now;
      suppressed = suppressed_;
      suppressed_ = 0;
    }
    return suppressed ? " [" + std::to_string(suppressed) + " similar lines suppressed]" : std::string();
  }

 private:
  const std::chrono::milliseconds interval_;
  std::mutex mutex_;
  bool logged_once_ = false;
  std::chrono::steady_clock::time_point last_{};
  uint64_t suppressed_ = 0;
};

}  // namespace sluice
