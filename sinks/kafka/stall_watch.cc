#include "sinks/kafka/stall_watch.h"

#include <algorithm>

#include <spdlog/spdlog.h>  // fmt::format

namespace sluice::kafka {
namespace {

constexpr std::chrono::milliseconds kDisagreementLimitMax{5000};
constexpr std::chrono::milliseconds kWaitNoteIntervalMax{600'000};
// The view asks a leader librdkafka cannot reach once per round (every 10 s once all is served, a
// round taking a few 2 s questions at most): an answer older than two rounds is not "lately".
constexpr std::chrono::milliseconds kLeaderAnswerFreshness{25'000};

std::string leader_name(int32_t id) { return id >= 0 ? std::to_string(id) : "none"; }

// The partition's leader answered the cluster view (its own client, the same settings) for it since
// librdkafka lost the cluster, and lately: not an outage, librdkafka has not come back to it. (Any
// broker's metadata answer would not do: the others may still name a leader this host cannot reach.)
bool view_contradicts(Clock::time_point now, const ProgressReport& report, const PartitionProgress& p,
                      std::optional<Clock::time_point> unreached_since) {
  return unreached_since && report.cluster_answered && p.leader_answered > *unreached_since &&
         now - p.leader_answered < kLeaderAnswerFreshness;
}

// Why the watch may not call a waiting partition stalled; empty when it may.
std::string why_no_verdict(Clock::time_point now, const ProgressReport& report, const PartitionProgress& p,
                           std::optional<Clock::time_point> unreached_since) {
  const bool outage = !view_contradicts(now, report, p, unreached_since);
  if (!report.any_broker_up && outage)
    return "librdkafka is connected to no broker (an outage; it reconnects by itself)";
  if (!report.cluster_answered) return "the cluster view has no recent answer";
  if (p.cluster_leader < 0) return "the cluster names no leader for it";
  if (!p.served) return fmt::format("its leader {} does not answer for it", p.cluster_leader);
  if (p.leader_down && outage) return fmt::format("librdkafka's connection to its leader {} is down", p.cluster_leader);
  return {};
}

}  // namespace

StallWatch::StallWatch(std::chrono::milliseconds limit, std::chrono::milliseconds reconnect_grace)
    : limit_(limit), disagreement_limit_(std::min(limit, kDisagreementLimitMax)), reconnect_grace_(reconnect_grace) {}

void StallWatch::note_unreached(Clock::time_point now, const ProgressReport& report) {
  std::map<std::pair<std::string, int32_t>, Clock::time_point> seen;
  for (const PartitionProgress& p : report.partitions) {
    if (!report.unreached(p)) continue;
    const auto before = unreached_since_.find({p.topic, p.partition});
    seen.emplace(std::pair{p.topic, p.partition}, before != unreached_since_.end() ? before->second : now);
  }
  unreached_since_.swap(seen);
}

std::optional<Clock::time_point> StallWatch::unreached_since(const PartitionProgress& p) const {
  const auto it = unreached_since_.find({p.topic, p.partition});
  if (it == unreached_since_.end()) return std::nullopt;
  return it->second;
}

void StallWatch::note_waits(Clock::time_point now, const ProgressReport& report) {
  std::map<std::pair<std::string, int32_t>, Wait> seen;
  const PartitionProgress* longest = nullptr;
  std::chrono::milliseconds longest_wait{0};
  std::string longest_why;
  size_t waiting = 0, waited_the_limit = 0;
  for (const PartitionProgress& p : report.partitions) {
    Wait& wait = seen[{p.topic, p.partition}];
    if (const auto before = waits_.find({p.topic, p.partition}); before != waits_.end()) wait = before->second;
    const bool moved = wait.delivered && p.delivered != *wait.delivered;
    wait.delivered = p.delivered;
    if (moved || p.outstanding == 0) {
      wait.since.reset();
      continue;
    }
    if (!wait.since) wait.since = now;
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - *wait.since);
    if (waited < limit_) continue;
    ++waited_the_limit;
    std::string why = why_no_verdict(now, report, p, unreached_since(p));
    if (why.empty()) continue;  // the stall watch's own to judge
    ++waiting;
    if (!longest || waited > longest_wait) {
      longest = &p;
      longest_wait = waited;
      longest_why = std::move(why);
    }
  }
  waits_.swap(seen);
  // The waits over, the next one is said at the limit again; a condition that clears for a report
  // while the messages still wait (a broker that flaps) does not start the intervals over.
  if (waited_the_limit == 0) wait_said_at_.reset();
  if (!longest) return;
  if (wait_said_at_ && now - *wait_said_at_ < wait_note_interval_) return;
  // The next note after twice the last interval (after the first: twice the limit), at most 10 min.
  wait_note_interval_ =
      std::min((wait_said_at_ ? wait_note_interval_ : limit_) * 2, std::max(limit_, kWaitNoteIntervalMax));
  wait_said_at_ = now;
  wait_note_ = fmt::format("{} [{}]: {} messages waiting, none delivered for {} s; no new producer while {}{}",
                           longest->topic, longest->partition, longest->outstanding, longest_wait.count() / 1000,
                           longest_why, waiting > 1 ? fmt::format(" ({} partitions wait so)", waiting) : "");
}

std::optional<std::string> StallWatch::observe(Clock::time_point now, const ProgressReport& report) {
  if (limit_.count() == 0) return std::nullopt;
  note_unreached(now, report);
  note_waits(now, report);
  // The cluster view not answered lately while brokers are up (it asks only every 10 s once all is
  // served; a broker slow to answer it): what the watch knows holds until it answers, no verdict.
  if (report.any_broker_up && !report.cluster_answered) return std::nullopt;
  std::optional<std::string> verdict;
  std::map<std::pair<std::string, int32_t>, Track> seen;  // a partition no longer reported is forgotten
  for (const PartitionProgress& p : report.partitions) {
    Track& track = seen[{p.topic, p.partition}];
    if (const auto before = tracks_.find({p.topic, p.partition}); before != tracks_.end()) track = before->second;
    const bool moved = track.delivered && p.delivered != *track.delivered;
    track.delivered = p.delivered;
    // Nothing waits, something moved, or a condition of why_no_verdict (the one list of them, which
    // the wait note names): no stall to see.
    if (moved || p.outstanding == 0 || !why_no_verdict(now, report, p, unreached_since(p)).empty()) {
      track.waiting_since.reset();
      track.disagrees_since.reset();
      continue;
    }
    const auto unreached = unreached_since(p);
    // The wait is counted apart while librdkafka is away and once it is back: back, it is given the
    // limit from then, as after an outage.
    if (!track.waiting_since || track.unreached != unreached.has_value()) track.waiting_since = now;
    track.unreached = unreached.has_value();
    // While librdkafka reconnects it may not know the leader yet: its leader is judged once it is back.
    if (p.client_leader != p.cluster_leader && !unreached) {
      if (!track.disagrees_since) track.disagrees_since = now;
    } else {
      track.disagrees_since.reset();
    }
    if (verdict) continue;
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - *track.waiting_since);
    if (unreached) {
      // The leader answers and librdkafka has not come back to it (why_no_verdict): judged after the
      // limit, and not before librdkafka has had its time to reconnect.
      if (waited >= std::max(limit_, reconnect_grace_)) {
        const auto lost = std::chrono::duration_cast<std::chrono::seconds>(now - *unreached).count();
        verdict = report.any_broker_up
                      ? fmt::format(
                            "{} [{}]: {} messages waiting, none delivered; librdkafka has not reconnected to "
                            "leader {} for {} s while that leader answers for it",
                            p.topic, p.partition, p.outstanding, p.cluster_leader, lost)
                      : fmt::format(
                            "{} [{}]: {} messages waiting, none delivered; librdkafka has been connected to "
                            "no broker for {} s while leader {} answers for it",
                            p.topic, p.partition, p.outstanding, lost, p.cluster_leader);
      }
    } else if (track.disagrees_since && now - *track.disagrees_since >= disagreement_limit_) {
      verdict = fmt::format(
          "{} [{}]: librdkafka sends it to leader {} while the cluster's leader {} answers for it ({} messages "
          "waiting, none delivered for {} s)",
          p.topic, p.partition, leader_name(p.client_leader), p.cluster_leader, p.outstanding, waited.count() / 1000);
    } else if (waited >= limit_) {
      verdict = fmt::format("{} [{}]: {} messages waiting, none delivered for {} s while its leader {} answers for it",
                            p.topic, p.partition, p.outstanding, waited.count() / 1000, p.cluster_leader);
    }
  }
  tracks_.swap(seen);
  if (verdict) wait_note_.reset();  // a new producer takes over: "no new producer" would mislead
  return verdict;
}

}  // namespace sluice::kafka
