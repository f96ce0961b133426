#include "channels/memory/memory_channel.h"

namespace sluice {
namespace {

std::unique_ptr<Channel> make_memory_channel(const config::ComponentConfig& component) {
  return std::make_unique<MemoryChannel>(component.name, parse_memory_channel_config(component));
}

}  // namespace

const ComponentSpec kMemoryChannelSpec{
    .kind = config::Kind::channel,
    .type = "memory",
    .aliases = {"org.apache.flume.channel.MemoryChannel"},
    .doc = "Bounded in-memory queue of event batches; a full channel pushes back to the sources.",
    .describe = [] { return config::describe(kMemoryChannelProperties); },
    .make_channel = &make_memory_channel,
};

MemoryChannel::MemoryChannel(std::string name, const MemoryChannelConfig& config)
    : name_(std::move(name)),
      capacity_(config.capacity),
      transaction_capacity_(config.transaction_capacity),
      byte_capacity_(config.byte_capacity.bytes * (100 - config.byte_capacity_buffer_percentage) / 100) {}

uint64_t MemoryChannel::memory_bound(const memory::Context& context) const {
  using namespace memory;
  // Bytes: byteCapacity, or one batch larger than it let into the empty channel; or, with no
  // byte bound, capacity events of the largest size.
  const uint64_t by_count = times(capacity_, context.max_event_bytes);
  const uint64_t bytes =
      byte_capacity_ ? std::min(by_count, std::max(byte_capacity_, context.max_batch_bytes)) : by_count;
  return add(times(kReservationFactor, bytes), times(capacity_, kEventOverheadBytes));
}

bool MemoryChannel::has_room(const EventBatch& batch) const {
  if (counters_.events_held + batch.size() > capacity_) return false;
  // A batch bigger than the byte bound would otherwise wait forever: let it into an empty channel.
  if (byte_capacity_ && counters_.bytes_held > 0 && counters_.bytes_held + batch.bytes() > byte_capacity_) return false;
  return true;
}

bool MemoryChannel::put(EventBatch& batch, Deadline deadline) {
  if (batch.empty()) return true;
  std::unique_lock lock(mutex_);
  if (!has_room(batch)) {
    const auto blocked_since = Clock::now();
    const bool room = not_full_.wait_until(lock, deadline, [&] { return has_room(batch); });
    counters_.put_blocked += Clock::now() - blocked_since;
    if (!room) return false;
  }
  counters_.events_put += batch.size();
  counters_.events_held += batch.size();
  counters_.bytes_held += batch.bytes();
  queued_events_ += batch.size();
  queue_.push_back(std::move(batch));
  batch = EventBatch{};
  lock.unlock();
  not_empty_.notify_one();
  return true;
}

Take MemoryChannel::take(size_t max_events, Deadline deadline) {
  Take take;
  std::unique_lock lock(mutex_);
  if (queue_.empty() && !not_empty_.wait_until(lock, deadline, [&] { return !queue_.empty(); })) return take;
  while (!queue_.empty() && take.events < max_events) {
    EventBatch& front = queue_.front();
    const size_t room = max_events - take.events;
    EventBatch part = front.size() <= room ? std::move(front) : front.split_front(room);
    if (front.empty()) queue_.pop_front();
    take.events += part.size();
    take.bytes += part.bytes();
    take.batches.push_back(std::move(part));
  }
  queued_events_ -= take.events;
  counters_.events_taken += take.events;
  const bool more = !queue_.empty();
  lock.unlock();
  // Several sinks share a channel: wake the next one while this one works.
  if (more) not_empty_.notify_one();
  return take;
}

void MemoryChannel::commit(const Take& take) {
  if (take.empty()) return;
  {
    std::lock_guard lock(mutex_);
    counters_.events_committed += take.events;
    counters_.events_held -= take.events;
    counters_.bytes_held -= take.bytes;
  }
  for (const EventBatch& batch : take.batches) batch.report_commit();
  not_full_.notify_all();
}

void MemoryChannel::rollback(Take&& take) {
  if (take.empty()) return;
  {
    std::lock_guard lock(mutex_);
    for (auto it = take.batches.rbegin(); it != take.batches.rend(); ++it) queue_.push_front(std::move(*it));
    queued_events_ += take.events;
    counters_.events_rolled_back += take.events;
  }
  take = Take{};
  not_empty_.notify_one();
}

ChannelCounters MemoryChannel::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

}  // namespace sluice
