#pragma once
// The parts of librdkafka's statistics (a JSON report every statistics.interval.ms) that Sluice
// reads: broker state and round-trip times for the metrics, and per partition the leader
// librdkafka sends it to, for the stall watch (stall_watch.h). (Its per-partition message counts
// are not read: messages a broker thread has taken are not in them, xmit_msgq_cnt is always 0.)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::kafka {

struct BrokerStats {
  int32_t id = -1;
  std::string name;
  bool up = false;
  double rtt_avg_seconds = 0;
  double rtt_p99_seconds = 0;
  uint64_t disconnects = 0;  // connections that were up and went down, since the producer began
};

struct PartitionStats {
  std::string topic;
  int32_t partition = 0;  // a real partition: the unassigned queue (-1) is left out
  int32_t leader = -1;    // the broker librdkafka takes for its leader; -1: none
};

struct ProducerStatistics {
  std::vector<BrokerStats> brokers;  // the cluster's brokers (bootstrap pseudo-brokers left out)
  std::vector<PartitionStats> partitions;
  bool any_broker_up() const;
  // Whether `id` is a broker of the report that is not up (an unknown id is not).
  bool broker_down(int32_t id) const;
  // librdkafka's leader of the partition; -1 if it names none or does not report the partition.
  int32_t leader(const std::string& topic, int32_t partition) const;
};

// nullopt if the report cannot be read (it then changes nothing).
std::optional<ProducerStatistics> parse_statistics(const char* json);

}  // namespace sluice::kafka
