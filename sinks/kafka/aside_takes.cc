#include "sinks/kafka/aside_takes.h"

#include <algorithm>
#include <utility>

namespace sluice::kafka {

void AsideTakes::add(AsideTake entry) {
  if (entry.take.empty()) return;
  events_ += entry.take.events;
  // Behind the last entry if it waits for the same destination (fewer entries to look at); a new
  // entry otherwise, so that the entries keep the order their events were taken in.
  if (!entries_.empty() && entries_.back().topic == entry.topic && entries_.back().partition == entry.partition) {
    AsideTake& last = entries_.back();
    for (EventBatch& batch : entry.take.batches) last.take.batches.push_back(std::move(batch));
    last.take.events += entry.take.events;
    last.take.bytes += entry.take.bytes;
    return;
  }
  entries_.push_back(std::move(entry));
}

bool AsideTakes::holds(const std::string& topic) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const AsideTake& e) { return e.topic == topic; });
}

void AsideTakes::take_out_if(const std::function<bool(AsideTake&)>& visit) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    const size_t before = it->take.events;
    const bool out = visit(*it);
    events_ -= out ? before : before - it->take.events;
    if (out)
      it = entries_.erase(it);
    else
      ++it;
  }
}

std::optional<Clock::time_point> AsideTakes::oldest() const {
  if (entries_.empty()) return std::nullopt;
  Clock::time_point oldest = entries_.front().since;
  for (const AsideTake& e : entries_) oldest = std::min(oldest, e.since);
  return oldest;
}

Take take_front(Take& from, size_t max_events) {
  Take front;
  while (!from.batches.empty() && front.events < max_events) {
    EventBatch& batch = from.batches.front();
    const size_t room = max_events - front.events;
    EventBatch part;
    if (batch.size() <= room) {
      part = std::move(batch);
      from.batches.erase(from.batches.begin());
    } else {
      part = batch.split_front(room);
    }
    front.events += part.size();
    front.bytes += part.bytes();
    from.events -= part.size();
    from.bytes -= part.bytes();
    front.batches.push_back(std::move(part));
  }
  return front;
}

std::deque<AsideTake> AsideTakes::take_all() {
  events_ = 0;
  return std::exchange(entries_, {});
}

}  // namespace sluice::kafka
