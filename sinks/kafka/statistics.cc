#include "sinks/kafka/statistics.h"

#include <algorithm>

#include <yaml-cpp/yaml.h>

namespace sluice::kafka {

bool ProducerStatistics::any_broker_up() const {
  return std::any_of(brokers.begin(), brokers.end(), [](const BrokerStats& b) { return b.up; });
}

bool ProducerStatistics::broker_down(int32_t id) const {
  return std::any_of(brokers.begin(), brokers.end(), [&](const BrokerStats& b) { return b.id == id && !b.up; });
}

int32_t ProducerStatistics::leader(const std::string& topic, int32_t partition) const {
  for (const PartitionStats& p : partitions)
    if (p.partition == partition && p.topic == topic) return p.leader;
  return -1;
}

// YAML is a superset of JSON: yaml-cpp reads librdkafka's report.
std::optional<ProducerStatistics> parse_statistics(const char* json) {
  ProducerStatistics stats;
  try {
    const YAML::Node root = YAML::Load(json);
    for (const auto& entry : root["brokers"]) {
      const YAML::Node b = entry.second;
      BrokerStats s;
      s.id = b["nodeid"].as<int32_t>(-1);
      if (s.id < 0) continue;  // bootstrap pseudo-brokers
      s.name = b["name"].as<std::string>("");
      s.up = b["state"].as<std::string>("") == "UP";
      s.rtt_avg_seconds = b["rtt"]["avg"].as<double>(0) / 1e6;
      s.rtt_p99_seconds = b["rtt"]["p99"].as<double>(0) / 1e6;
      s.disconnects = b["disconnects"].as<uint64_t>(0);
      stats.brokers.push_back(std::move(s));
    }
    for (const auto& topic : root["topics"]) {
      const std::string name = topic.first.as<std::string>();
      for (const auto& entry : topic.second["partitions"]) {
        const YAML::Node p = entry.second;
        const int32_t partition = p["partition"].as<int32_t>(-1);
        if (partition < 0) continue;  // the unassigned queue: no partition known yet (e.g. a missing topic)
        stats.partitions.push_back({.topic = name, .partition = partition, .leader = p["leader"].as<int32_t>(-1)});
      }
    }
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
  return stats;
}

}  // namespace sluice::kafka
