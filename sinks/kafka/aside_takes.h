#pragma once
// The events a Kafka sink has taken but not produced, because their partition is not served yet
// (a topic just created, a partition without a leader, a topic the cluster view has not answered
// for): each destination's events in the order taken, still uncommitted in the channel (they
// count against its capacity, as every taken event does), sent as soon as their partition is
// served, or given back to the channel when the sink stops. They hold no take of the window, so
// the rest of the sink's events flow meanwhile; but there is a bound (kAsideTakes takes' worth),
// past which the sink takes nothing more until some are sent: a partition that stays without a
// leader then pushes back on the senders through the channel, as a full channel does.
//
// Owned and used by the sink's thread.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "agent/api/channel.h"

namespace sluice::kafka {

// Up to `max_events` from the front of `from`, in order (a batch split where needed).
Take take_front(Take& from, size_t max_events);

struct AsideTake {
  std::string topic;
  int32_t partition = -1;  // -1: none chosen yet (the topic was not known when it was taken)
  bool topic_from_event = false;
  Take take;
  Clock::time_point since;
};

class AsideTakes {
 public:
  static constexpr size_t kAsideTakes = 4;  // takes' worth of events held aside at most, on disk channels
  // The bound for a sink taking `batch_size` from `channel`.
  static uint64_t bound_for(const Channel& channel, size_t batch_size) {
    const uint64_t takes = kAsideTakes * batch_size;
    return channel.keeps_contents() ? takes : std::max<uint64_t>(takes, channel.capacity());
  }
  explicit AsideTakes(uint64_t bound) : bound_(bound) {}

  void add(AsideTake entry);
  bool empty() const { return entries_.empty(); }
  bool full() const { return events_ >= bound_; }
  uint64_t events() const { return events_; }
  bool holds(const std::string& topic) const;

  // Each entry in order: `visit` may take events from the front of its take (take_front), and
  // returns true to take the entry out (it then owns what is left of its take).
  void take_out_if(const std::function<bool(AsideTake&)>& visit);
  // When the oldest entry was set aside; nullopt when none is.
  std::optional<Clock::time_point> oldest() const;
  // Every entry, in order, emptied out (at a stop: back to the channel).
  std::deque<AsideTake> take_all();

 private:
  const uint64_t bound_;
  std::deque<AsideTake> entries_;
  uint64_t events_ = 0;
};

}  // namespace sluice::kafka
