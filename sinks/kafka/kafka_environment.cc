#include "sinks/kafka/kafka_environment.h"

#include <vector>

#include <spdlog/spdlog.h>

namespace sluice::kafka {

void KafkaEnvironment::require_topic(const std::string& bootstrap, const std::string& topic, int partitions) {
  if (bootstrap != kEmbedded) return;
  int& needed = embedded_topics_[topic];
  needed = std::max(needed, partitions);
}

void KafkaEnvironment::start() {
  if (embedded_topics_.empty() || embedded_) return;
  embedded_ = std::make_unique<MockCluster>(1);
  for (const auto& [topic, partitions] : embedded_topics_) {
    embedded_->create_topic(topic, partitions);
    spdlog::info("embedded kafka: topic {} with {} partitions", topic, partitions);
  }
  spdlog::info("embedded kafka: bootstrap {} (kcat -b {} -L)", embedded_->bootstrap_servers(),
               embedded_->bootstrap_servers());
}

std::string KafkaEnvironment::resolve_bootstrap(const std::string& bootstrap) const {
  if (bootstrap == kEmbedded && embedded_) return embedded_->bootstrap_servers();
  return bootstrap;
}

std::shared_ptr<Producer> KafkaEnvironment::producer(const ProducerSettings& settings, bool shared,
                                                     std::chrono::milliseconds stall_limit) {
  if (!shared) return std::make_shared<Producer>(settings, stall_limit);
  std::string key = "stall limit=" + std::to_string(stall_limit.count()) + "\n";
  for (const auto& [name, setting] : settings) key += name + "=" + setting.value + "\n";
  std::lock_guard lock(mutex_);
  if (auto existing = producers_[key].lock(); existing && !existing->needs_replacing()) return existing;
  auto created = std::make_shared<Producer>(settings, stall_limit);
  if (finish_asking_by_ != Clock::time_point::max()) created->finish_asking_by(finish_asking_by_);
  producers_[key] = created;
  return created;
}

void KafkaEnvironment::finish_asking_by(Clock::time_point deadline) {
  std::vector<std::shared_ptr<Producer>> live;  // released after the lock: the last may be destroyed
  {
    std::lock_guard lock(mutex_);
    finish_asking_by_ = std::min(finish_asking_by_, deadline);
    for (auto& [key, producer] : producers_)
      if (auto shared = producer.lock()) live.push_back(std::move(shared));
  }
  for (const auto& producer : live) producer->finish_asking_by(deadline);
}

}  // namespace sluice::kafka
