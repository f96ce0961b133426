#pragma once
// acks=0: how many of a sink's messages were written to each broker lately, so that a connection
// that drops can be charged with what it may have taken along. librdkafka reports an acks=0
// message delivered once its request is written to the socket; the broker never answers. A broker
// that closes the connection (a produce it refused, a restart, a crash) has not necessarily read
// what was written last, and nobody can know which messages those were: the messages written to it
// in the two seconds before Sluice learnt the connection went down (from librdkafka's error
// callback, or its statistics' count of disconnects, each second) are counted as possibly lost (an
// upper estimate: a healthy broker reads what it is sent within milliseconds).
//
// written() runs on whichever thread polls librdkafka (per delivered message: relaxed loads and
// stores, no locked add); take() on whichever thread is told of the disconnect. Counts are
// estimates: slots are reused without a lock, so a message counted into a slot at its turn of the
// second may be lost or kept.

#include <array>
#include <atomic>
#include <cstdint>

namespace sluice::kafka {

// Time in slots of 64 ms (milliseconds >> 6), as a thread that polls librdkafka last saw it (set
// before each poll).
inline constexpr int kWriteTickShift = 6;
int64_t write_tick();
void set_write_tick();

class RecentWrites {
 public:
  // 32 × 64 ms: about two seconds, so that a disconnect learnt from the statistics (each second)
  // still finds what was written in the second before it.
  static constexpr int kSlots = 32;

  void written(int32_t broker, int64_t tick) {
    if (broker < 0) return;
    Broker& b = brokers_[static_cast<size_t>(broker) % brokers_.size()];
    const size_t slot = static_cast<size_t>(tick) & (kSlots - 1);
    if (b.tick[slot].load(std::memory_order_relaxed) != tick) {
      b.tick[slot].store(tick, std::memory_order_relaxed);
      b.count[slot].store(0, std::memory_order_relaxed);
    }
    // Not a locked add: it would wait for the thread's pending stores, per message. Two threads
    // counting the same sink's writes at once (a shared producer polled by several) may lose one.
    b.count[slot].store(b.count[slot].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  // What was written to `broker` in the two seconds up to `tick`, counted once (the slots are cleared).
  uint64_t take(int32_t broker, int64_t tick) {
    if (broker < 0) return 0;
    Broker& b = brokers_[static_cast<size_t>(broker) % brokers_.size()];
    uint64_t sum = 0;
    for (size_t slot = 0; slot < kSlots; ++slot) {
      const int64_t at = b.tick[slot].load(std::memory_order_relaxed);
      if (at > tick - kSlots && at <= tick) sum += b.count[slot].exchange(0, std::memory_order_relaxed);
    }
    return sum;
  }

 private:
  struct Broker {
    std::array<std::atomic<int64_t>, kSlots> tick{};
    std::array<std::atomic<uint64_t>, kSlots> count{};
  };
  std::array<Broker, 16> brokers_{};  // by broker id (ids of one cluster rarely collide modulo 16)
};

}  // namespace sluice::kafka
