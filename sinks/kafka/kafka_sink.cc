#include "sinks/kafka/kafka_sink.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <span>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/log_limiter.h"
#include "channels/event_json.h"

namespace sluice::kafka {
namespace {

std::unique_ptr<Sink> make_kafka_sink(const config::ComponentConfig& component, Channel& channel,
                                      BuildContext& context) {
  KafkaSinkConfig c = parse_kafka_sink_config(component);
  c.batch_size = static_cast<int64_t>(batch_size_for(component, "batchSize", c.batch_size, channel));
  // Enough partitions for a pinned sink; ten for an unpinned one, like the seed's topic.
  context.kafka->require_topic(c.bootstrap, c.topic, c.partition >= 0 ? static_cast<int>(c.partition) + 1 : 10);
  return std::make_unique<KafkaSink>(component.name, std::move(c), channel, *context.kafka);
}

constexpr auto kTakeWait = std::chrono::milliseconds(100);
constexpr auto kRetryBackoffMin = std::chrono::milliseconds(100);
constexpr auto kRetryBackoffMax = std::chrono::seconds(10);

}  // namespace

const ComponentSpec kKafkaSinkSpec{
    .kind = config::Kind::sink,
    .type = "kafka",
    .aliases = {"org.apache.flume.sink.kafka.KafkaSink", "com.igloosec.KafkaSink"},
    .doc = "Produces events to Kafka with librdkafka, a batch per take, without copying them.\n\n"
           "Producer settings: `kafka.producer.<name>` passes a librdkafka (Kafka producer) property through; so does "
           "`kafka.<name>`, with the Kafka 0.8 names the seed uses mapped onto librdkafka's: `request.required.acks` -> "
           "`acks`, `send.buffer.bytes` -> `socket.send.buffer.bytes`, `queue.buffering.max.message` (sic) -> "
           "`queue.buffering.max.messages` (with a warning), `compression.codec` 0/1/2 -> none/gzip/snappy; "
           "`kafka.producer.type = sync` commits only after delivery reports, as acks >= 1 does; `requiredAcks` -> `acks`. "
           "A property librdkafka refuses stops start-up with its message and the line. `acks` defaults to 1 (Flume's "
           "default). With acks=0 a batch is committed once librdkafka has taken it; with acks >= 1 only when every "
           "delivery report succeeded, else it goes back to the channel and is retried with backoff.",
    .describe = [] { return config::describe(kKafkaSinkProperties); },
    .make_sink = &make_kafka_sink,
};

struct KafkaSink::Counters {
  std::atomic<uint64_t> taken{0}, sent{0}, failed{0}, discarded{0}, rolled_back{0}, batches{0};
  std::atomic<uint64_t> failed_by_reason[kDeliveryErrorKinds] = {};
  std::atomic<uint64_t> batch_buckets[DurationHistogram::kBuckets] = {};
  std::atomic<uint64_t> batch_nanoseconds{0};
  std::string sink_name;
  LogLimiter failure_log;

  // One log line (rate-limited) and the counters for `count` undelivered events.
  void count_failures(DeliveryError reason, uint64_t count, const std::string& text, std::string_view consequence) {
    failed.fetch_add(count, std::memory_order_relaxed);
    failed_by_reason[static_cast<int>(reason)].fetch_add(count, std::memory_order_relaxed);
    uint64_t suppressed = 0;
    if (failure_log.allow(suppressed))
      spdlog::error("sink {}: {} events not delivered ({}: {}); {}{}", sink_name, count, to_string(reason), text,
                    consequence, suppressed ? fmt::format(" [{} similar lines suppressed]", suppressed) : "");
  }
};

namespace {

// acks=0: a take already committed to the channel, on its way to Kafka. Holds the take's
// batches (so the bytes librdkafka points at stay alive) until the last delivery report; the
// last one to let go frees it, on whichever thread polled.
class HandedOverTake final : public DeliveryTracker {
 public:
  HandedOverTake(Take take, std::shared_ptr<KafkaSink::Counters> counters)
      : take_(std::move(take)), counters_(std::move(counters)), references_(static_cast<int64_t>(take_.events) + 1) {}

  void on_delivery(const DeliveryReport& report) override {
    if (report.error != DeliveryError::none) {
      // Rare, so a lock per failed message is fine; successes cost one atomic each.
      std::lock_guard lock(mutex_);
      ++failures_[static_cast<int>(report.error)];
      if (last_text_.empty()) last_text_ = report.text;
    }
    release();
  }
  void release() {
    if (references_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    for (int r = 0; r < kDeliveryErrorKinds; ++r)
      if (failures_[r])
        counters_->count_failures(static_cast<DeliveryError>(r), failures_[r], last_text_,
                                  "acks=0: they are lost (counted)");
    delete this;
  }
  const Take& take() const { return take_; }

 private:
  Take take_;
  std::shared_ptr<KafkaSink::Counters> counters_;
  std::atomic<int64_t> references_;
  std::mutex mutex_;
  uint64_t failures_[kDeliveryErrorKinds] = {};
  std::string last_text_;
};

}  // namespace

// acks>=1: a take whose every message's outcome the sink waits for, one slot per message.
class AwaitedTake {
 public:
  explicit AwaitedTake(Take take)
      : take_(std::move(take)), slots_(take_.events), errors_(take_.events, DeliveryError::none),
        outstanding_(static_cast<int64_t>(take_.events)) {
    for (size_t i = 0; i < slots_.size(); ++i) slots_[i] = Slot{this, static_cast<uint32_t>(i)};
  }
  DeliveryTracker* tracker(size_t i) { return &slots_[i]; }
  bool done() const { return outstanding_.load(std::memory_order_acquire) == 0; }
  Take& take() { return take_; }
  DeliveryError error(size_t i) const { return errors_[i]; }
  std::string text() const {
    std::lock_guard lock(mutex_);
    return text_;
  }

 private:
  struct Slot final : DeliveryTracker {
    AwaitedTake* owner = nullptr;
    uint32_t index = 0;
    Slot() = default;
    Slot(AwaitedTake* o, uint32_t i) : owner(o), index(i) {}
    void on_delivery(const DeliveryReport& report) override { owner->record(index, report); }
  };
  void record(uint32_t index, const DeliveryReport& report) {
    if (report.error != DeliveryError::none) {
      errors_[index] = report.error;
      std::lock_guard lock(mutex_);
      if (text_.empty()) text_ = report.text;
    }
    outstanding_.fetch_sub(1, std::memory_order_acq_rel);
  }

  Take take_;
  std::vector<Slot> slots_;
  std::vector<DeliveryError> errors_;
  std::atomic<int64_t> outstanding_;
  mutable std::mutex mutex_;
  std::string text_;
};

KafkaSink::KafkaSink(std::string name, KafkaSinkConfig config, Channel& channel, KafkaEnvironment& env)
    : name_(std::move(name)),
      config_(std::move(config)),
      channel_(channel),
      env_(env),
      batch_size_(static_cast<size_t>(config_.batch_size)),
      counters_(std::make_shared<Counters>()) {
  counters_->sink_name = name_;
}

KafkaSink::~KafkaSink() {
  if (thread_.joinable()) stop(Clock::now());
}

void KafkaSink::start() {
  ProducerSettings settings = config_.producer;
  settings["bootstrap.servers"] = ProducerSetting{env_.resolve_bootstrap(config_.bootstrap), {}, "brokerList"};
  std::atomic_store(&producer_, env_.producer(settings, config_.share_producer));
  thread_ = std::thread([this] { run(); });
  spdlog::info("sink {}: topic {} partition {} on {} (acks={}, {} per batch, commit {})", name_, config_.topic,
               config_.partition >= 0 ? std::to_string(config_.partition) : "by librdkafka",
               settings["bootstrap.servers"].value, config_.acks, batch_size_,
               config_.wait_for_delivery ? "after delivery reports" : "when librdkafka takes the batch");
}

void KafkaSink::run() {
  while (true) {
    Take take = channel_.take(batch_size_, Clock::now() + kTakeWait);
    if (take.empty()) {
      producer_->poll(0);
      if (draining_.load()) break;
      continue;
    }
    counters_->taken.fetch_add(take.events, std::memory_order_relaxed);
    const auto taken_at = Clock::now();
    send(std::move(take));
    const auto took = Clock::now() - taken_at;
    counters_->batch_buckets[DurationHistogram::bucket_of(std::chrono::duration<double>(took).count())].fetch_add(1);
    counters_->batch_nanoseconds.fetch_add(static_cast<uint64_t>(took.count()), std::memory_order_relaxed);
    counters_->batches.fetch_add(1, std::memory_order_relaxed);
    producer_->poll(0);
    if (draining_.load() && Clock::now() >= drain_deadline_) break;
  }
}

void KafkaSink::add_message(const EventBatch& batch, const EventRecord& e, DeliveryTracker* tracker) {
  OutgoingMessage& m = messages_.emplace_back();
  if (config_.format == PayloadFormat::json) {
    // The arena may still move as it grows: offsets now, pointers in produce_messages().
    const size_t start = json_.size();
    append_event_json(batch, e, json_);
    m.payload = reinterpret_cast<const char*>(start);
    m.length = json_.size() - start;
  } else {
    const std::string_view payload = config_.format == PayloadFormat::raw ? batch.raw(e) : batch.body(e);
    m.payload = payload.data();
    m.length = payload.size();
  }
  m.tracker = tracker;
  if (config_.key_field != EventField::none) {
    // librdkafka copies keys, but only at produce(): numeric keys need a home until then.
    char* scratch = key_scratch_.emplace_back().data();
    const std::string_view key = batch.field(e, config_.key_field, scratch);
    if (!key.empty()) {  // no host in the line: no key, librdkafka picks the partition
      m.key = key.data();
      m.key_length = key.size();
    }
  }
  if (config_.partition_field != EventField::none) m.partition = static_cast<int32_t>(EventBatch::numeric_field(e, config_.partition_field));
  if (config_.topic_field != EventField::none) {
    char unused[24];
    topics_.push_back(batch.field(e, config_.topic_field, unused));
  }
}

void KafkaSink::produce_messages() {
  const int32_t partition =
      config_.partition_field != EventField::none ? Producer::kPerMessage : static_cast<int32_t>(config_.partition);
  give_up_ = past_deadline();
  const bool json = config_.format == PayloadFormat::json;
  if (json)
    for (OutgoingMessage& m : messages_) m.payload = json_.data() + reinterpret_cast<size_t>(m.payload);
  if (config_.topic_field == EventField::none) {
    producer_->produce(config_.topic, partition, messages_, give_up_, json);
    return;
  }
  // Per-event topics: one produce call per run of events bound for the same topic; events
  // without the field go to the configured topic.
  const std::span<const OutgoingMessage> all(messages_);
  size_t start = 0;
  for (size_t i = 1; i <= messages_.size(); ++i) {
    if (i < messages_.size() && topics_[i] == topics_[start]) continue;
    const std::string topic = topics_[start].empty() ? config_.topic : std::string(topics_[start]);
    producer_->produce(topic, partition, all.subspan(start, i - start), give_up_, json);
    start = i;
  }
}

bool KafkaSink::past_deadline() const { return draining_.load() && Clock::now() >= drain_deadline_; }

void KafkaSink::send(Take take) {
  messages_.clear();
  json_.clear();
  key_scratch_.clear();
  topics_.clear();
  key_scratch_.reserve(config_.key_field != EventField::none ? take.events : 0);
  if (!config_.wait_for_delivery) {
    // acks=0: committed once librdkafka has taken the batch; that is all acks=0 promises.
    const Take handed{take.batches, take.events, take.bytes};  // shares the batches: no copy of events
    auto* in_flight = new HandedOverTake(std::move(take), counters_);
    for (const EventBatch& batch : in_flight->take().batches)
      for (const EventRecord& e : batch) add_message(batch, e, in_flight);
    produce_messages();
    channel_.commit(handed);
    counters_->sent.fetch_add(handed.events, std::memory_order_relaxed);
    in_flight->release();
    return;
  }

  AwaitedTake awaited(std::move(take));
  size_t index = 0;
  for (const EventBatch& batch : awaited.take().batches)
    for (const EventRecord& e : batch) add_message(batch, e, awaited.tracker(index++));
  produce_messages();
  bool purged = false;
  while (!awaited.done()) {
    producer_->poll(10);
    if (!purged && past_deadline()) {
      // Shutting down and out of time: let librdkafka report what it still holds as purged.
      producer_->purge();
      purged = true;
    }
  }
  settle(awaited);
}

// Commits what was delivered, discards what can never be (counted by reason), and rolls the
// rest back into the channel: only the failed events, so delivered ones are not sent twice.
void KafkaSink::settle(AwaitedTake& awaited) {
  Take& take = awaited.take();
  Take finished, retry;
  uint64_t failed_by_reason[kDeliveryErrorKinds] = {};
  size_t index = 0;
  auto add_slice = [](Take& to, EventBatch part) {
    to.events += part.size();
    to.bytes += part.bytes();
    to.batches.push_back(std::move(part));
  };
  for (const EventBatch& batch : take.batches) {
    // Consecutive events with the same fate go back to the channel (retry) or leave it
    // (finished: delivered or discarded) as one slice; a disk-backed channel needs the slices.
    size_t run_start = 0;
    bool run_retries = false;
    for (size_t i = 0; i < batch.size(); ++i, ++index) {
      const DeliveryError error = awaited.error(index);
      const bool retriable = error != DeliveryError::none && !is_permanent(error);
      if (error != DeliveryError::none) ++failed_by_reason[static_cast<int>(error)];
      if (i > 0 && retriable != run_retries) {
        add_slice(run_retries ? retry : finished, batch.slice(run_start, i - run_start));
        run_start = i;
      }
      run_retries = retriable;
    }
    if (!batch.empty()) add_slice(run_retries ? retry : finished, batch.slice(run_start, batch.size() - run_start));
  }
  const std::string text = awaited.text();
  for (int r = 0; r < kDeliveryErrorKinds; ++r) {
    if (!failed_by_reason[r]) continue;
    const auto reason = static_cast<DeliveryError>(r);
    if (is_permanent(reason)) {
      counters_->discarded.fetch_add(failed_by_reason[r], std::memory_order_relaxed);
      counters_->count_failures(reason, failed_by_reason[r], text, "discarded: retrying cannot help (counted)");
    } else {
      counters_->count_failures(reason, failed_by_reason[r], text,
                                fmt::format("back to channel {}, retried in {} ms", channel_.name(), backoff_.count()));
    }
  }
  uint64_t discarded = 0;
  for (int r = 0; r < kDeliveryErrorKinds; ++r)
    if (is_permanent(static_cast<DeliveryError>(r))) discarded += failed_by_reason[r];
  counters_->sent.fetch_add(finished.events - discarded, std::memory_order_relaxed);
  channel_.commit(finished);
  if (retry.empty()) {
    backoff_ = kRetryBackoffMin;
    return;
  }
  counters_->rolled_back.fetch_add(retry.events, std::memory_order_relaxed);
  channel_.rollback(std::move(retry));
  // Back off before the next take, but never past the shutdown deadline.
  const auto until = Clock::now() + backoff_;
  while (Clock::now() < until && !past_deadline()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  backoff_ = std::min(backoff_ * 2, std::chrono::duration_cast<std::chrono::milliseconds>(kRetryBackoffMax));
}

void KafkaSink::stop(Deadline deadline) {
  if (!thread_.joinable()) return;
  drain_deadline_ = deadline;
  draining_.store(true);
  thread_.join();
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  // Whatever is still queued when the (possibly shared) producer is destroyed is purged and
  // reported to its InFlightTake, which counts it as failed.
  const int remaining = producer_->flush(static_cast<int>(std::max<int64_t>(left, 0)));
  if (remaining > 0)
    spdlog::error("sink {}: {} messages still queued in librdkafka at the shutdown deadline; they are "
                  "purged and counted as failed", name_, remaining);
  std::atomic_store(&producer_, std::shared_ptr<Producer>());
  const SinkCounters c = counters();
  spdlog::info("sink {}: stopped; {} events sent, {} failed ({} discarded, {} rolled back for retry)", name_,
               c.events_sent, c.events_failed, c.events_discarded, c.events_rolled_back);
}

SinkCounters KafkaSink::counters() const {
  SinkCounters c;
  c.events_taken = counters_->taken.load();
  c.events_sent = counters_->sent.load();
  c.events_failed = counters_->failed.load();
  c.events_rolled_back = counters_->rolled_back.load();
  c.events_discarded = counters_->discarded.load();
  for (int r = 0; r < kDeliveryErrorKinds; ++r)
    if (const uint64_t n = counters_->failed_by_reason[r].load())
      c.failed_by_reason.emplace_back(std::string(to_string(static_cast<DeliveryError>(r))), n);
  for (size_t b = 0; b < DurationHistogram::kBuckets; ++b) {
    c.batch_seconds.counts[b] = counters_->batch_buckets[b].load();
    c.batch_seconds.count += c.batch_seconds.counts[b];
  }
  c.batch_seconds.sum_seconds = counters_->batch_nanoseconds.load() / 1e9;
  if (auto producer = std::atomic_load(&producer_)) {
    c.queue_messages = producer->queue_length();
    for (const BrokerStats& b : producer->broker_stats())
      c.brokers.push_back({b.name, b.up, b.rtt_avg_seconds, b.rtt_p99_seconds});
  }
  c.batches = counters_->batches.load();
  return c;
}

}  // namespace sluice::kafka
