#include "sinks/kafka/stall_watch.h"

#include <spdlog/spdlog.h>  // fmt::format

namespace sluice::kafka {

std::optional<std::string> StallWatch::observe(Clock::time_point now, const ProducerStatistics& stats) {
  if (limit_.count() == 0) return std::nullopt;
  const bool cluster_answers = stats.any_broker_up();
  std::optional<std::string> verdict;
  std::map<std::pair<std::string, int32_t>, Track> seen;  // a partition no longer reported is forgotten
  for (const PartitionStats& p : stats.partitions) {
    Track& track = seen[{p.topic, p.partition}];
    if (const auto before = tracks_.find({p.topic, p.partition}); before != tracks_.end()) track = before->second;
    const bool moved = track.sent >= 0 && p.sent != track.sent;  // first seen: the count starts now
    track.sent = p.sent;
    // A leader that is down (a broker the agent cannot reach, one that crashed): an outage of that
    // broker, which a new producer does not end.
    if (moved || p.queued == 0 || p.in_flight > 0 || !cluster_answers || stats.broker_down(p.leader)) {
      track.stalled_since.reset();
      continue;
    }
    if (!track.stalled_since) track.stalled_since = now;
    const auto stalled_for = std::chrono::duration_cast<std::chrono::milliseconds>(now - *track.stalled_since);
    if (!verdict && stalled_for >= limit_)
      verdict = fmt::format("{} [{}]: {} messages waiting, none sent for {} s while a broker is up (leader {})",
                            p.topic, p.partition, p.queued, stalled_for.count() / 1000,
                            p.leader >= 0 ? std::to_string(p.leader) : "none");
  }
  tracks_.swap(seen);
  return verdict;
}

}  // namespace sluice::kafka
