#include "agent/channel_handover.h"

#include <algorithm>

namespace sluice {

bool share_storage(const Channel& a, const Channel& b) {
  if (!a.keeps_contents() || !b.keeps_contents()) return false;
  const std::vector<std::string> theirs = b.storage_paths();
  for (const std::string& path : a.storage_paths())
    if (std::find(theirs.begin(), theirs.end(), path) != theirs.end()) return true;
  return false;
}

uint64_t move_events(Channel& from, Channel& to, uint64_t max_events, bool only_what_close_keeps) {
  uint64_t moved = 0;
  while (moved < max_events) {
    const uint64_t held = to.counters().events_held;
    const size_t room =
        static_cast<size_t>(std::min<uint64_t>(to.capacity() > held ? to.capacity() - held : 0, max_events - moved));
    if (room == 0) break;
    Take take = from.take(std::min(room, from.transaction_capacity()), Clock::now());
    if (take.empty()) break;
    Take done, back;  // what went in, what goes back to the front of `from`
    for (EventBatch& batch : take.batches) {
      // Read back from `from`'s disk: `to` gets events of its own, which `from`'s record-keeping
      // neither hears of again nor lets `to` take for its own records.
      EventBatch moving = batch.without_tracker();
      const bool kept = !only_what_close_keeps || to.keeps_more(batch.size(), batch.bytes());
      Take& into = back.empty() && kept && to.put(moving, Clock::now()) ? done : back;
      into.events += batch.size();
      into.bytes += batch.bytes();
      // What goes back keeps its acknowledger; what moved is acknowledged by `to` alone.
      into.batches.push_back(&into == &done ? batch.without_acknowledger() : std::move(batch));
    }
    from.commit(done);
    moved += done.events;
    if (!back.empty()) {
      from.rollback(std::move(back));
      break;
    }
  }
  return moved;
}

}  // namespace sluice
