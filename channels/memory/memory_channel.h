#pragma once
// The bounded in-memory channel (Flume's `memory`). Thread-safe: any number of source
// threads put and sink threads take; one mutex, taken once per batch, never per event.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "agent/api/channel.h"
#include "agent/api/component_spec.h"
#include "channels/memory/memory_channel_config.h"

namespace sluice {

class MemoryChannel final : public Channel {
 public:
  MemoryChannel(std::string name, const MemoryChannelConfig& config);

  const std::string& name() const override { return name_; }
  bool put(EventBatch& batch, Deadline deadline) override;
  Take take(size_t max_events, Deadline deadline) override;
  void commit(const Take& take) override;
  void rollback(Take&& take) override;
  size_t capacity() const override { return capacity_; }
  size_t transaction_capacity() const override { return transaction_capacity_; }
  ChannelCounters counters() const override;
  uint64_t memory_bound(const memory::Context& context) const override;

 private:
  bool has_room(const EventBatch& batch) const;

  const std::string name_;
  const size_t capacity_;
  const size_t transaction_capacity_;
  const uint64_t byte_capacity_;  // 0: unbounded by bytes

  mutable std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<EventBatch> queue_;
  size_t queued_events_ = 0;
  ChannelCounters counters_;
};

extern const ComponentSpec kMemoryChannelSpec;

}  // namespace sluice
