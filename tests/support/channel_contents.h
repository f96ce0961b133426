#pragma once
// What a test's channel holds: every event taken and committed (as a sink would), bodies in order.

#include <string>
#include <vector>

#include "agent/api/channel.h"

namespace sluice::test {

inline std::vector<std::string> take_all_bodies(Channel& channel) {
  std::vector<std::string> out;
  for (Take t = channel.take(100000, Clock::now()); !t.empty(); t = channel.take(100000, Clock::now())) {
    for (const EventBatch& b : t.batches)
      for (const EventRecord& e : b) out.emplace_back(b.body(e));
    channel.commit(t);
  }
  return out;
}

}  // namespace sluice::test
