#pragma once
// Notices a partition whose messages stopped moving while the cluster answers: messages wait
// for it, none is in flight, none has been sent for `limit`, some broker is up and the partition's
// leader, as librdkafka knows it, is not a broker that is down. librdkafka
// can leave a partition so after an outage (a metadata update naming no leader is skipped and
// the partition never finds its leader again: librdkafka issue 5430, seen with 2.14.2 against
// Kafka 4.4 after a broker restart); only a new producer recovers it. A partition that truly
// has no leader for that long looks the same: a new producer then changes nothing, and its watch
// fires again no sooner than its limit later (the sink lengthens it: KafkaSink::lengthen_stall_limit).
//
// Fed from librdkafka's statistics (statistics.interval.ms), so it sees nothing without them.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "agent/api/deadline.h"
#include "sinks/kafka/statistics.h"

namespace sluice::kafka {

class StallWatch {
 public:
  explicit StallWatch(std::chrono::milliseconds limit) : limit_(limit) {}  // 0: never fires

  // One statistics report at `now`. Returns what is stalled (topic, partition, how many wait,
  // for how long) once some partition has been stalled for the limit, else nullopt.
  std::optional<std::string> observe(Clock::time_point now, const ProducerStatistics& stats);

 private:
  struct Track {
    int64_t sent = -1;
    std::optional<Clock::time_point> stalled_since;
  };
  const std::chrono::milliseconds limit_;
  std::map<std::pair<std::string, int32_t>, Track> tracks_;  // the partitions of the last report
};

}  // namespace sluice::kafka
