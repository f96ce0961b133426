#pragma once
// A source's acknowledger for channel tests: counts, per event index, how often a channel
// reported it committed.

#include <map>
#include <mutex>

#include "agent/api/event_batch.h"

namespace sluice::test {

class RecordingAcknowledger final : public CommitTracker {
 public:
  void committed(size_t first, size_t count) override {
    std::lock_guard lock(mutex_);
    for (size_t i = first; i < first + count; ++i) ++times_[i];
  }
  // Index -> times committed.
  std::map<size_t, int> times() const {
    std::lock_guard lock(mutex_);
    return times_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<size_t, int> times_;
};

// `n` events, "e<first>".., whose commits `acknowledger` hears of.
inline EventBatch acknowledged_batch(int first, int n, std::shared_ptr<CommitTracker> acknowledger) {
  EventBatchBuilder builder;
  builder.set_acknowledger(std::move(acknowledger));
  for (int i = first; i < first + n; ++i) builder.append("<13>x app: e" + std::to_string(i));
  return builder.seal();
}

// Each of the events [0, n) committed exactly once.
inline std::map<size_t, int> each_once(size_t n) {
  std::map<size_t, int> out;
  for (size_t i = 0; i < n; ++i) out[i] = 1;
  return out;
}

}  // namespace sluice::test
