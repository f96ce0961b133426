#pragma once
// Delivery reports come one message at a time, on whichever thread polls librdkafka, and a take's
// come mostly in a run. What each adds to a shared count (its partition's delivered or failed, its
// acks=0 take's references) is summed here, per thread, and added once per run: when a report
// names another count, and at the latest when the poll that served them returns (Producer calls
// flush_report_tally() after every librdkafka call that serves reports). A locked add per message
// waits for the thread's pending stores; three of them per report cost the benchmark 2% (profile:
// the adds were most of on_delivery_report's and HandedOverTake::on_delivery's time).

#include <atomic>
#include <cstdint>

namespace sluice::kafka {

namespace report_tally_detail {
struct Tally {
  std::atomic<uint64_t>* counter = nullptr;
  uint64_t counted = 0;
  void* holder = nullptr;
  void (*release)(void*, int64_t) = nullptr;
  int64_t releases = 0;

  void flush_count() {
    if (counted) counter->fetch_add(counted, std::memory_order_relaxed);
    counted = 0;
  }
  void flush_releases() {
    // Last: the release may free the holder (its last reference), which a report may name again
    // only if it is still alive.
    void* const h = holder;
    const int64_t n = releases;
    holder = nullptr;
    releases = 0;
    if (n) release(h, n);
  }
};
inline thread_local Tally tl_tally;
}  // namespace report_tally_detail

// One more on `counter`.
inline void tally_count(std::atomic<uint64_t>& counter) {
  auto& t = report_tally_detail::tl_tally;
  if (t.counter != &counter) {
    t.flush_count();
    t.counter = &counter;
  }
  ++t.counted;
}

// One reference of `holder` let go: holder.release(n) for the run.
template <class Holder>
void tally_release(Holder& holder) {
  auto& t = report_tally_detail::tl_tally;
  if (t.holder != &holder) {
    t.flush_releases();
    t.holder = &holder;
    t.release = [](void* h, int64_t n) { static_cast<Holder*>(h)->release(n); };
  }
  ++t.releases;
}

// Adds what this thread summed. Before a count or holder may go (a producer destroyed).
inline void flush_report_tally() {
  auto& t = report_tally_detail::tl_tally;
  t.flush_count();
  t.counter = nullptr;
  t.flush_releases();
}

}  // namespace sluice::kafka
