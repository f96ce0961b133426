#include "channels/spillable/spillable_channel.h"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "agent/api/metric_names.h"
#include "channels/spillable/batch_codec.h"
#include "channels/spillable/spillable_channel_config.h"

namespace sluice {
namespace {

std::unique_ptr<Channel> make_spillable_channel(const config::ComponentConfig& component) {
  return std::make_unique<SpillableChannel>(component, parse_spillable_channel_config(component, false));
}

std::unique_ptr<Channel> make_file_channel(const config::ComponentConfig& component) {
  return std::make_unique<SpillableChannel>(component, parse_spillable_channel_config(component, true));
}

}  // namespace

const ComponentSpec kSpillableChannelSpec{
    .kind = config::Kind::channel,
    .type = "spillablememory",
    .aliases = {"org.apache.flume.channel.SpillableMemoryChannel"},
    .doc =
        "Memory first; when memory is full, batches overflow to Snappy-compressed, CRC-checked segment files on "
        "disk, in order. Records on disk survive restarts and crashes until delivered.",
    .describe = [] { return config::describe(kSpillableChannelProperties); },
    .make_channel = &make_spillable_channel,
};

const ComponentSpec kFileChannelSpec{
    .kind = config::Kind::channel,
    .type = "file",
    .aliases = {"org.apache.flume.channel.file.FileChannel"},
    .doc =
        "Every batch on disk before its put returns (the spillable channel with memoryCapacity 0): nothing "
        "accepted is lost when the agent is killed.",
    .describe = [] { return config::describe(file_channel_properties()); },
    .make_channel = &make_file_channel,
};

// Counts the commits of a batch read back from disk; the record goes once all are in, and a
// part committed before the rest is logged, so that a restart does not deliver it again.
// Called by commit(), with the channel's mutex held.
class SpillableChannel::RecordTracker final : public CommitTracker {
 public:
  RecordTracker(SpillableChannel& channel, spill::RecordRef record, uint32_t committed_before = 0)
      : channel_(channel), record_(record), remaining_(record.events - committed_before) {}
  void committed(size_t first, size_t count) override {
    if (remaining_ == 0 || count == 0) return;
    remaining_ -= std::min<size_t>(count, remaining_);
    if (remaining_ == 0)
      channel_.release(record_, count);
    else
      channel_.release_part(record_, {static_cast<uint32_t>(first), static_cast<uint32_t>(count)});
  }

 private:
  SpillableChannel& channel_;
  const spill::RecordRef record_;
  size_t remaining_;
};

SpillableChannel::SpillableChannel(config::ComponentConfig component, SpillableChannelConfig config)
    : component_(std::move(component)),
      config_(std::move(config)),
      memory_byte_capacity_(static_cast<uint64_t>(config_.byte_capacity.bytes) *
                            static_cast<uint64_t>(100 - config_.byte_capacity_buffer_percentage) / 100) {}

SpillableChannel::~SpillableChannel() { close(); }

void SpillableChannel::open() {
  if (store_) return;
  spill::RecoveryReport report;
  std::vector<spill::ReplayRecord> replay;
  try {
    store_ = std::make_unique<spill::SegmentStore>(
        spill::SegmentStoreConfig{config_.data_dir, config_.checkpoint_dir,
                                  static_cast<uint64_t>(config_.max_file_size.bytes), config_.fsync},
        spill::event_layout_version(), report, replay);
  } catch (const std::runtime_error& e) {
    component_.fail("dataDir", e.what());
  }
  for (const std::string& problem : report.problems) spdlog::error("channel {}: {}", name(), problem);
  {
    std::lock_guard lock(mutex_);
    for (const spill::ReplayRecord& r : replay) {
      if (r.committed.empty()) {
        queue_.push_back(Entry{{}, r.record, {}});
        disk_events_ += r.record.events;
      } else {
        queue_partly_committed(r);
      }
    }
    counters_.events_recovered = report.events_replayed;
    spill_counters_.corrupt_tails = report.corrupt_tails;
    spill_counters_.corrupt_bytes = report.corrupt_bytes;
  }
  spdlog::info("channel {}: {} events in {} records to deliver from {} segment(s) in {}{}", name(),
               report.events_replayed, report.records_replayed, report.segments, config_.data_dir,
               report.corrupt_tails
                   ? fmt::format("; {} corrupt tail(s), {} bytes cut", report.corrupt_tails, report.corrupt_bytes)
                   : "");
  if (config_.fsync == spill::FsyncPolicy::interval)
    flusher_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      while (!flusher_wake_.wait_for(lock, config_.fsync_interval, [&] { return stopping_; })) {
        lock.unlock();
        store_->sync();
        lock.lock();
      }
    });
}

std::vector<std::string> SpillableChannel::storage_paths() const {
  std::vector<std::string> paths;
  for (const std::string& dir : {config_.checkpoint_dir, config_.data_dir}) {
    std::error_code error;
    const std::filesystem::path normal = std::filesystem::weakly_canonical(std::filesystem::absolute(dir), error);
    paths.push_back(error ? std::filesystem::path(dir).lexically_normal().string() : normal.string());
    if (!paths.back().empty() && paths.back().size() > 1 && paths.back().back() == '/') paths.back().pop_back();
  }
  return paths;
}

bool SpillableChannel::keeps_more(size_t events, uint64_t bytes) const {
  std::lock_guard lock(mutex_);
  if (!store_ || stopping_) return false;
  if (memory_events_ + disk_events_ + events > static_cast<uint64_t>(config_.overflow_capacity)) return false;
  // What close() would write (the memory part and these), as records at their largest: each
  // event's fixed-size record and bytes, uncompressed, and a record header per event at worst.
  const uint64_t records =
      memory_bytes_ + bytes + (memory_events_ + events) * (sizeof(EventRecord) + spill::SegmentStore::kRecordHeader);
  if (config_.max_bytes_on_disk.bytes &&
      store_->bytes_on_disk() + records > static_cast<uint64_t>(config_.max_bytes_on_disk.bytes))
    return false;
  return store_->free_space() >= static_cast<uint64_t>(config_.minimum_required_space.bytes) + records;
}

void SpillableChannel::close() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !store_) return;
    stopping_ = true;
  }
  flusher_wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  // What is still in memory goes to disk, so that a clean stop loses nothing (it is replayed
  // after what was already there).
  std::lock_guard lock(mutex_);
  uint64_t saved = 0, unsaved = 0;
  std::string encoded;
  for (Entry& entry : queue_) {
    if (entry.disk || entry.batch.empty() || entry.batch.tracker()) continue;  // already on disk
    const size_t events = entry.batch.size();
    encoded.clear();
    spill::encode_batch(entry.batch, encoded);
    if (disk_refusal(events, encoded.size())) {
      unsaved += events;
      continue;
    }
    try {
      entry.disk = store_->append(encoded, static_cast<uint32_t>(events));
      entry.origin = entry.batch.origin();
    } catch (const std::runtime_error& e) {
      spdlog::error("channel {}: {}", name(), e.what());
      unsaved += events;
      continue;
    }
    memory_events_ -= events;
    memory_bytes_ -= entry.batch.bytes();
    disk_events_ += events;
    entry.batch = EventBatch{};
    saved += events;
  }
  store_->sync();
  if (saved || unsaved)
    spdlog::info("channel {}: wrote the {} events left in memory to disk{}", name(), saved,
                 unsaved ? fmt::format("; {} did not fit and are lost", unsaved) : "");
  // Its directories are let go now, not when the object goes: a reload opens its successor on them
  // while this one is still around (its counters are read until the reload is done).
  bytes_on_disk_at_close_ = store_->bytes_on_disk();
  disk_write_errors_at_close_ = store_->write_errors();
  store_.reset();
}

// A record part of which was delivered before the stop: read now, and only the rest queued,
// as slices that share one tracker (rare: a take smaller than a record, a partial failure).
void SpillableChannel::queue_partly_committed(const spill::ReplayRecord& r) {
  uint32_t done = 0;
  for (const spill::EventRange& part : r.committed) done += part.count;
  disk_events_ += r.record.events - done;
  const auto payload = store_->read(r.record);
  auto batch =
      payload ? spill::decode_batch(*payload, std::make_shared<RecordTracker>(*this, r.record, done)) : std::nullopt;
  if (!batch || batch->size() != r.record.events) {
    drop_unreadable(r.record, r.record.events - done);
    return;
  }
  uint32_t next = 0;
  auto queue_slice = [&](uint32_t end) {
    if (end > next) queue_.push_back(Entry{batch->slice(next, end - next), std::nullopt, {}});
  };
  for (const spill::EventRange& part : r.committed) {
    queue_slice(part.first);
    next = part.first + part.count;
  }
  queue_slice(r.record.events);
}

// With mutex_ held: a record that no longer matches its CRC; `events` of it are lost.
void SpillableChannel::drop_unreadable(const spill::RecordRef& record, uint64_t events) {
  // Written whole and checked at start, yet not readable now: the device corrupted it.
  spdlog::error(
      "channel {}: a record of {} events in segment {} at offset {} no longer matches its CRC: {} events "
      "lost (counted as events_unreadable)",
      name(), record.events, record.segment, record.offset, events);
  counters_.events_unreadable += events;
  release(record, events);
}

size_t SpillableChannel::capacity() const {
  return static_cast<size_t>(config_.memory_capacity + config_.overflow_capacity);
}

// The queue's entry per record on disk (an Entry: its reference, origin and an empty batch),
// whose records are at least an event each: overflowCapacity bounds their number.
constexpr uint64_t kDiskRecordEntryBytes = 192;

uint64_t SpillableChannel::memory_bound(const memory::Context& context) const {
  using namespace memory;
  const auto memory_events = static_cast<uint64_t>(config_.memory_capacity);
  const uint64_t by_count = times(memory_events, context.max_event_bytes);
  const uint64_t transaction = static_cast<uint64_t>(config_.transaction_capacity);
  const uint64_t memory_bytes =
      memory_byte_capacity_ ? std::min(by_count, std::max(memory_byte_capacity_, context.max_batch_bytes)) : by_count;
  uint64_t bound = add(times(kReservationFactor, memory_bytes), times(memory_events, kEventOverheadBytes));
  // Records read back from disk for the sinks' takes: a take of a transaction's events, in
  // records that may each be larger than what the take needs of it (a source's batch).
  const uint64_t take =
      add(times(transaction, add(context.max_event_bytes, kEventOverheadBytes)), context.max_batch_bytes);
  bound = add(bound, times(std::max<uint64_t>(1, context.takes_in_flight), take));
  return add(bound, times(static_cast<uint64_t>(config_.overflow_capacity), kDiskRecordEntryBytes));
}

bool SpillableChannel::memory_has_room(size_t events, uint64_t bytes) const {
  if (memory_events_ + events > static_cast<uint64_t>(config_.memory_capacity)) return false;
  // A batch larger than the byte bound may still use an empty memory part.
  return memory_byte_capacity_ == 0 || memory_bytes_ == 0 || memory_bytes_ + bytes <= memory_byte_capacity_;
}

const char* SpillableChannel::disk_refusal(size_t events, uint64_t stored) const {
  if (!store_) return "the channel is not open";
  if (disk_events_ + events > static_cast<uint64_t>(config_.overflow_capacity)) return "overflowCapacity reached";
  stored += spill::SegmentStore::kRecordHeader;
  // One record larger than the bound would otherwise wait forever: it may go to an empty disk.
  if (config_.max_bytes_on_disk.bytes && disk_events_ > 0 &&
      store_->bytes_on_disk() + stored > static_cast<uint64_t>(config_.max_bytes_on_disk.bytes))
    return "maxBytesOnDisk reached";
  if (store_->free_space() < static_cast<uint64_t>(config_.minimum_required_space.bytes) + stored)
    return "free space below minimumRequiredSpace";
  return nullptr;
}

void SpillableChannel::log_blocked(const char* reason) {
  if (auto note = blocked_log_.next())
    spdlog::warn(
        "channel {}: memory full and {}: sources wait (backpressure); {} events in memory, {} on disk, {} "
        "bytes on disk{}",
        name(), reason, memory_events_, disk_events_, store_ ? store_->bytes_on_disk() : 0, *note);
}

bool SpillableChannel::put(EventBatch& batch, Deadline deadline) {
  if (batch.empty()) return true;
  const size_t events = batch.size();
  std::string encoded;  // compressed outside the lock, once memory turns out to be full
  std::unique_lock lock(mutex_);
  const auto started = Clock::now();
  bool waited = false;
  while (true) {
    if (memory_has_room(events, batch.bytes())) {
      counters_.events_put += events;
      memory_events_ += events;
      memory_bytes_ += batch.bytes();
      queue_.push_back(Entry{std::move(batch), std::nullopt, {}});
      break;
    }
    if (encoded.empty() && store_ && config_.overflow_capacity > 0) {
      lock.unlock();
      spill::encode_batch(batch, encoded);
      lock.lock();
      continue;  // memory may have room by now
    }
    const char* refusal = encoded.empty() ? "overflowCapacity is 0" : disk_refusal(events, encoded.size());
    if (!refusal) {
      try {
        const spill::RecordRef record = store_->append(encoded, static_cast<uint32_t>(events));
        queue_.push_back(Entry{{}, record, batch.origin()});
        counters_.events_put += events;
        spill_counters_.events_spilled += events;
        disk_events_ += events;
        break;
      } catch (const std::runtime_error& e) {
        spdlog::error("channel {}: cannot spill: {}", name(), e.what());
        refusal = "the disk refuses writes";
      }
    }
    log_blocked(refusal);
    waited = true;
    if (Clock::now() >= deadline) {
      counters_.put_blocked += Clock::now() - started;
      return false;
    }
    not_full_.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(200)));
  }
  if (waited) counters_.put_blocked += Clock::now() - started;
  batch = EventBatch{};
  lock.unlock();
  not_empty_.notify_one();
  return true;
}

EventBatch SpillableChannel::load(const spill::RecordRef& record, BatchOrigin origin) {
  if (!store_) return {};  // closed (nothing takes from a closed channel)
  const auto payload = store_->read(record);
  auto batch = payload
                   ? spill::decode_batch(*payload, std::make_shared<RecordTracker>(*this, record), std::move(origin))
                   : std::nullopt;
  if (!batch || batch->size() != record.events) return {};
  return std::move(*batch);
}

Take SpillableChannel::take(size_t max_events, Deadline deadline) {
  Take take;
  // Per batch of the take: a record to read after unlocking, and its origin.
  std::vector<std::optional<std::pair<spill::RecordRef, BatchOrigin>>> to_read;
  std::unique_lock lock(mutex_);
  if (queue_.empty() && !not_empty_.wait_until(lock, deadline, [&] { return !queue_.empty(); })) return take;
  std::vector<spill::RecordRef> unreadable;
  while (!queue_.empty() && take.events < max_events) {
    Entry& front = queue_.front();
    const size_t room = max_events - take.events;
    if (front.disk) {
      if (front.disk->events > room && take.events > 0) break;  // whole records, unless it is the first
      const spill::RecordRef record = *front.disk;
      BatchOrigin origin = std::move(front.origin);
      queue_.pop_front();
      if (record.events <= room) {
        take.batches.emplace_back();
        to_read.emplace_back(std::in_place, record, std::move(origin));
        take.events += record.events;
        continue;
      }
      // Bigger than the take: read it now and leave its rest at the front, in order.
      EventBatch whole = load(record, std::move(origin));
      if (whole.empty()) {
        drop_unreadable(record, record.events);  // never part of this take
        continue;
      }
      EventBatch part = whole.split_front(room);
      queue_.push_front(Entry{std::move(whole), std::nullopt, {}});
      take.events += part.size();
      take.bytes += part.bytes();
      take.batches.push_back(std::move(part));
      to_read.emplace_back();
    } else {
      EventBatch part = front.batch.size() <= room ? std::move(front.batch) : front.batch.split_front(room);
      if (front.batch.empty()) queue_.pop_front();
      take.events += part.size();
      take.bytes += part.bytes();
      take.batches.push_back(std::move(part));
      to_read.emplace_back();
    }
  }
  const bool more = !queue_.empty();
  lock.unlock();
  if (more) not_empty_.notify_one();
  // Records are read and decompressed outside the lock: puts and other takes go on meanwhile.
  for (size_t i = 0; i < take.batches.size(); ++i) {
    if (!to_read[i]) continue;
    take.batches[i] = load(to_read[i]->first, std::move(to_read[i]->second));
    if (take.batches[i].empty())
      unreadable.push_back(to_read[i]->first);
    else
      take.bytes += take.batches[i].bytes();
  }
  lock.lock();
  for (const spill::RecordRef& record : unreadable) {
    drop_unreadable(record, record.events);
    take.events -= record.events;  // each was added whole to this take above
  }
  std::erase_if(take.batches, [](const EventBatch& b) { return b.empty(); });
  counters_.events_taken += take.events;
  return take;
}

void SpillableChannel::release(const spill::RecordRef& record, size_t events) {
  if (!store_) return;  // closed: its successor owns the directory (nothing commits after a close)
  store_->release(record);
  disk_events_ -= std::min<uint64_t>(disk_events_, events);
  not_full_.notify_all();
}

void SpillableChannel::release_part(const spill::RecordRef& record, spill::EventRange part) {
  if (!store_) return;
  store_->release_part(record, part);
  disk_events_ -= std::min<uint64_t>(disk_events_, part.count);
  not_full_.notify_all();
}

void SpillableChannel::commit(const Take& take) {
  if (take.empty()) return;
  std::lock_guard lock(mutex_);
  for (const EventBatch& batch : take.batches) {
    if (CommitTracker* tracker = batch.tracker()) {
      tracker->committed(batch.first(), batch.size());
    } else {
      memory_events_ -= std::min<uint64_t>(memory_events_, batch.size());
      memory_bytes_ -= std::min<uint64_t>(memory_bytes_, batch.bytes());
    }
    batch.report_commit();
  }
  counters_.events_committed += take.events;
  not_full_.notify_all();
}

void SpillableChannel::rollback(Take&& take) {
  if (take.empty()) return;
  {
    std::lock_guard lock(mutex_);
    for (auto it = take.batches.rbegin(); it != take.batches.rend(); ++it)
      queue_.push_front(Entry{std::move(*it), std::nullopt, {}});
    counters_.events_rolled_back += take.events;
  }
  take = Take{};
  not_empty_.notify_one();
}

ChannelCounters SpillableChannel::counters() const {
  std::lock_guard lock(mutex_);
  ChannelCounters c = counters_;
  c.events_held = memory_events_ + disk_events_;
  c.bytes_held = memory_bytes_;
  c.events_on_disk = disk_events_;
  return c;
}

SpillCounters SpillableChannel::spill_counters() const {
  std::lock_guard lock(mutex_);
  SpillCounters c = spill_counters_;
  c.bytes_on_disk = store_ ? store_->bytes_on_disk() : bytes_on_disk_at_close_;
  c.disk_write_errors = store_ ? store_->write_errors() : disk_write_errors_at_close_;
  return c;
}

void SpillableChannel::write_metrics(MetricsWriter& w) const {
  const ChannelCounters c = counters();
  const SpillCounters s = spill_counters();
  const MetricLabels l{{"channel", name()}};
  w.gauge(metric_names::kChannelDiskEvents, l, c.events_on_disk);
  w.gauge(metric_names::kChannelDiskBytes, l, s.bytes_on_disk);
  w.counter(metric_names::kChannelEventsSpilledTotal, l, s.events_spilled);
  w.counter(metric_names::kChannelEventsRecoveredTotal, l, c.events_recovered);
  w.counter(metric_names::kChannelCorruptTailsTotal, l, s.corrupt_tails);
  w.counter(metric_names::kChannelEventsUnreadableTotal, l, c.events_unreadable);
  w.counter(metric_names::kChannelDiskWriteErrorsTotal, l, s.disk_write_errors);
}

}  // namespace sluice
