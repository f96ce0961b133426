#pragma once
// What a test's channel holds: every event taken and committed (as a sink would), bodies in order.

#include <string>
#include <vector>

#include "agent/api/channel.h"

namespace sluice::test {

// Every event taken and committed, each as `describe(batch, event)` says, in order.
template <class Describe>
std::vector<std::string> take_all(Channel& channel, Describe&& describe) {
  std::vector<std::string> out;
  for (Take t = channel.take(100000, Clock::now()); !t.empty(); t = channel.take(100000, Clock::now())) {
    for (const EventBatch& b : t.batches)
      for (const EventRecord& e : b) out.emplace_back(describe(b, e));
    channel.commit(t);
  }
  return out;
}

inline std::vector<std::string> take_all_bodies(Channel& channel) {
  return take_all(channel, [](const EventBatch& b, const EventRecord& e) { return std::string(b.body(e)); });
}

}  // namespace sluice::test
