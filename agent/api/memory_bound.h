#pragma once
// The agent's memory bound, a formula of its settings: every component says how much memory it
// can hold at the most (memory_bound()), the agent adds its base, and `sluice --check` prints the
// sum (docs/memory.md). The terms are upper bounds of what the code
// keeps, not measurements of what it usually keeps; the constants below are the per-item costs,
// each with its reason. Kernel memory (socket buffers) is not the process's and not counted.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "agent/api/event_batch.h"

namespace sluice::memory {

// What a component needs to know of its neighbours to bound itself.
struct Context {
  uint64_t max_event_bytes = 0;  // the largest event the channel's sources make (frame + what parsing adds)
  uint64_t max_batch_bytes = 0;  // the largest batch they put (batchSize such events)
  size_t takes_in_flight = 0;    // a channel's sinks' takes at once (Sink::takes_in_flight)
  size_t channel_capacity = 0;   // a sink's channel: events it may hold (taken ones included)
  // The headers the channel's sources' events may carry beside their parsed fields (a sink reading
  // one they cannot carry finds it on no event); nullopt: any name.
  std::optional<std::vector<std::string>> event_headers;
};

// "No bound": a setting that bounds nothing (byteCapacity = 0). The sum says so.
inline constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

inline uint64_t add(uint64_t a, uint64_t b) { return a > kUnbounded - b ? kUnbounded : a + b; }
inline uint64_t times(uint64_t count, uint64_t each) {
  return each != 0 && count > kUnbounded / each ? kUnbounded : count * each;
}

// The process with no component: binary, libraries, the main and metrics threads, the allocator's
// arenas (measured idle: 9 MB; an agent of the seed's ten sinks and its embedded Kafka: 16 MB).
inline constexpr uint64_t kBaseBytes = 32ull << 20;
// What an event costs beside its bytes, in a channel: its record, and its share of a batch's
// storage, control block and queue entry when batches are of one event (the worst case).
inline constexpr uint64_t kEventOverheadBytes = 2 * sizeof(EventRecord) + 512;
// A batch's storage may be reserved up to twice what it holds before seal() gives it back.
inline constexpr uint64_t kReservationFactor = 2;
// A batch built by a source whose selector has several routes: route 0's reservation (a quarter
// more than its last batch), the other routes' together (at most as much again), and each storage's
// growth to twice what it holds (EventBatchBuilder::set_last_route).
inline constexpr uint64_t kRoutedReservationFactor = 5;
// Which of the two applies to a source with `selector` (null: no selector, one route).
template <class Selector>
uint64_t reservation_factor(const Selector* selector) {
  return selector && !selector->single_route() ? kRoutedReservationFactor : kReservationFactor;
}
// The allocator's share on top of what is live (fragmentation, arenas' free lists).
inline uint64_t with_allocator_slack(uint64_t bytes) { return bytes == kUnbounded ? bytes : bytes + bytes / 4; }

}  // namespace sluice::memory
