#pragma once
// Notices a partition that librdkafka no longer delivers to although the cluster serves it: messages
// of ours wait for it (produced and not yet reported, by the producer's own count: librdkafka's
// statistics do not show the messages a broker thread has taken), the cluster names a leader that
// answers for the partition (cluster_view.h), and either
//   - librdkafka sends the partition to another leader than the cluster's (or to none) for
//     `disagreement_limit`: its view went wrong (after an outage it can skip the metadata update
//     that would bring the partition back to its leader: librdkafka issue 5430); or
//   - nothing of the partition was delivered for `limit` (a view that looks right, and still
//     nothing moves).
// librdkafka connected to no broker, or its connection to the leader down, is an outage, which a
// new producer does not end, until the leader itself has answered the cluster view (a client of its
// own, with the same settings) for the partition since librdkafka lost it, lately: then the leader
// is there and librdkafka has not come back to it. Such a wait is a stall after `limit`, but never
// before `reconnect_grace` (librdkafka's longest wait between attempts to connect and its longest
// attempt), and librdkafka's leader is not judged meanwhile (it may not know it while it reconnects).
// Only a new producer recovers such a partition. A partition that truly has no leader is none of
// this: the cluster names none, and the sink keeps its events aside instead of producing them.
//
// Fed once per statistics report (statistics.interval.ms), so it sees nothing without them.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/api/deadline.h"

namespace sluice::kafka {

// One partition as the producer sees it at a statistics report.
struct PartitionProgress {
  std::string topic;
  int32_t partition = 0;
  uint64_t outstanding = 0;             // produced and not yet reported (delivered or failed), by our count
  uint64_t delivered = 0;               // reported delivered, ever
  int32_t client_leader = -1;           // the leader librdkafka sends it to (statistics); -1: none
  int32_t cluster_leader = -1;          // the leader the cluster names; -1: none
  bool served = false;                  // the cluster's leader answers for it
  bool leader_down = false;             // librdkafka's connection to the cluster's leader is not up
  Clock::time_point leader_answered{};  // when the cluster's leader last answered the view for it
};

struct ProgressReport {
  bool any_broker_up = false;     // librdkafka is connected to some broker
  bool cluster_answered = false;  // the cluster view's last answer is recent (else the watch holds what it knows)
  std::vector<PartitionProgress> partitions;

  // librdkafka connected to no broker, or not to the partition's leader.
  bool unreached(const PartitionProgress& p) const { return !any_broker_up || p.leader_down; }
};

class StallWatch {
 public:
  // 0: never fires. The disagreement limit is the smaller of 5 s and `limit`.
  // `reconnect_grace`: librdkafka's defaults, reconnect.backoff.max.ms (10 s) and
  // socket.connection.setup.timeout.ms (30 s) (reconnect_grace() in producer.h reads the settings).
  explicit StallWatch(std::chrono::milliseconds limit,
                      std::chrono::milliseconds reconnect_grace = std::chrono::milliseconds(40'000));

  // One report at `now`. Returns what is stalled (topic, partition, why, how many wait) once some
  // partition has met a limit, else nullopt.
  std::optional<std::string> observe(Clock::time_point now, const ProgressReport& report);

  // A wait the watch lets be, to be logged; left by observe() until taken. Messages of a partition
  // that waited `limit` with none of the partition delivered while a condition above keeps the watch
  // from a verdict (an outage, no leader, a leader that does not answer for it or that librdkafka
  // cannot reach, a cluster view without a recent answer): the longest such wait, how many
  // partitions wait so, and why. Said at `limit`, then after twice as long each time (at most
  // every 10 min, or every `limit` if longer) while messages wait that long; never in a report
  // that gives a verdict. (Without statistics, or with a limit of 0, the watch sees nothing and
  // says nothing.)
  std::optional<std::string> take_wait_note() { return std::exchange(wait_note_, std::nullopt); }

 private:
  // Messages of a partition waiting with none delivered, whatever the conditions (for the note).
  struct Wait {
    std::optional<uint64_t> delivered;
    std::optional<Clock::time_point> since;
  };
  void note_waits(Clock::time_point now, const ProgressReport& report);
  // Since when librdkafka has been connected to no broker, or not to the partition's leader (none:
  // it is); kept for the partitions of this report.
  void note_unreached(Clock::time_point now, const ProgressReport& report);
  std::optional<Clock::time_point> unreached_since(const PartitionProgress& p) const;

  struct Track {
    std::optional<uint64_t> delivered;                 // at the last report (none: first seen, the count starts now)
    std::optional<Clock::time_point> waiting_since;    // outstanding, served, nothing delivered
    std::optional<Clock::time_point> disagrees_since;  // librdkafka's leader is not the cluster's
    bool unreached = false;                            // waiting_since counts a wait while librdkafka is away
  };
  const std::chrono::milliseconds limit_, disagreement_limit_, reconnect_grace_;
  std::map<std::pair<std::string, int32_t>, Clock::time_point> unreached_since_;
  std::map<std::pair<std::string, int32_t>, Track> tracks_;  // the partitions of the last report
  std::map<std::pair<std::string, int32_t>, Wait> waits_;    // those of every report, for the note
  std::optional<Clock::time_point> wait_said_at_;            // the last note, while such waits go on
  std::chrono::milliseconds wait_note_interval_{0};          // from it to the next
  std::optional<std::string> wait_note_;
};

}  // namespace sluice::kafka
