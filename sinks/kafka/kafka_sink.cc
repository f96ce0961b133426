#include "sinks/kafka/kafka_sink.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

namespace sluice::kafka {
namespace {

std::unique_ptr<Sink> make_kafka_sink(const config::ComponentConfig& component, Channel& channel,
                                      BuildContext& context) {
  KafkaSinkConfig c = parse_kafka_sink_config(component);
  if (static_cast<size_t>(c.batch_size) > channel.transaction_capacity())
    component.fail("batchSize", std::to_string(c.batch_size) + " exceeds the transactionCapacity (" +
                                    std::to_string(channel.transaction_capacity()) + ") of channel '" +
                                    channel.name() + "'");
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
  std::atomic<uint64_t> taken{0}, sent{0}, failed{0}, rolled_back{0}, undelivered_at_exit{0}, batches{0};
};

namespace {

// One take on its way to Kafka. Holds the take's batches (so the bytes librdkafka points at
// stay alive) and counts delivery reports. Shared by the sink and the reports: the last one
// to let go frees it, on whichever thread polled.
class InFlightTake final : public DeliveryTracker {
 public:
  InFlightTake(Take take, std::shared_ptr<KafkaSink::Counters> counters, bool counts_on_delivery)
      : take_(std::move(take)),
        counters_(std::move(counters)),
        counts_on_delivery_(counts_on_delivery),
        references_(static_cast<int64_t>(take_.events) + 1) {}

  void on_delivery(int error_code, const char* error_text) override {
    if (error_code) {
      if (failed_.fetch_add(1, std::memory_order_relaxed) == 0) {
        first_error_code_ = error_code;
        first_error_ = error_text ? error_text : "";
      }
    }
    if (--outstanding_ == 0) finish();
    release();
  }
  void release() {
    if (references_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  bool done() const { return outstanding_.load(std::memory_order_acquire) == 0; }
  uint64_t failed() const { return failed_.load(); }
  std::string first_error() const { return first_error_; }
  Take& take() { return take_; }

 private:
  void finish() {
    // Per take, not per event: the counters cost one atomic add per batch.
    const uint64_t failed = failed_.load();
    if (counts_on_delivery_) {
      counters_->failed.fetch_add(failed, std::memory_order_relaxed);
    }
  }

  Take take_;
  std::shared_ptr<KafkaSink::Counters> counters_;
  const bool counts_on_delivery_;
  std::atomic<int64_t> references_;
  std::atomic<int64_t> outstanding_{static_cast<int64_t>(take_.events)};
  std::atomic<uint64_t> failed_{0};
  int first_error_code_ = 0;
  std::string first_error_;
};

}  // namespace

KafkaSink::KafkaSink(std::string name, KafkaSinkConfig config, Channel& channel, KafkaEnvironment& env)
    : name_(std::move(name)),
      config_(std::move(config)),
      channel_(channel),
      env_(env),
      batch_size_(config_.batch_size ? static_cast<size_t>(config_.batch_size) : channel.transaction_capacity()),
      counters_(std::make_shared<Counters>()) {}

KafkaSink::~KafkaSink() {
  if (thread_.joinable()) stop(Clock::now());
}

void KafkaSink::start() {
  ProducerSettings settings = config_.producer;
  settings["bootstrap.servers"] = ProducerSetting{env_.resolve_bootstrap(config_.bootstrap), {}, "brokerList"};
  producer_ = env_.producer(settings);
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
    counters_->batches.fetch_add(1, std::memory_order_relaxed);
    send(std::move(take));
    producer_->poll(0);
    if (draining_.load() && Clock::now() >= drain_deadline_) break;
  }
}

void KafkaSink::send(Take take) {
  auto backoff = kRetryBackoffMin;
  while (true) {
    const size_t events = take.events;
    const uint64_t bytes = take.bytes;
    auto* in_flight = new InFlightTake(std::move(take), counters_, !config_.wait_for_delivery);
    std::vector<OutgoingMessage>& messages = messages_;
    messages.clear();
    for (const EventBatch& batch : in_flight->take().batches) {
      for (const EventRecord& e : batch) {
        const std::string_view payload = config_.format == PayloadFormat::raw ? batch.raw(e) : batch.body(e);
        messages.push_back(OutgoingMessage{payload.data(), payload.size(), nullptr, 0, in_flight});
      }
    }
    give_up_ = draining_.load() && Clock::now() >= drain_deadline_;
    producer_->produce(config_.topic, static_cast<int32_t>(config_.partition), messages, give_up_);

    if (!config_.wait_for_delivery) {
      // acks=0: handed over is as far as the promise goes.
      Take handed{{}, events, bytes};
      channel_.commit(handed);
      counters_->sent.fetch_add(events, std::memory_order_relaxed);
      in_flight->release();
      return;
    }
    while (!in_flight->done()) producer_->poll(10);
    const uint64_t failed = in_flight->failed();
    if (failed == 0) {
      channel_.commit(in_flight->take());
      counters_->sent.fetch_add(events, std::memory_order_relaxed);
      in_flight->release();
      return;
    }
    counters_->failed.fetch_add(failed, std::memory_order_relaxed);
    const auto now = Clock::now();
    if (now - last_failure_log_ > std::chrono::seconds(10)) {
      last_failure_log_ = now;
      spdlog::error("sink {}: {} of {} events not delivered ({}); the batch goes back to channel {} and is retried",
                    name_, failed, events, in_flight->first_error(), channel_.name());
    }
    take = std::move(in_flight->take());
    in_flight->release();
    if (draining_.load() && Clock::now() >= drain_deadline_) {
      counters_->undelivered_at_exit.fetch_add(take.events, std::memory_order_relaxed);
      counters_->rolled_back.fetch_add(take.events, std::memory_order_relaxed);
      channel_.rollback(std::move(take));
      return;
    }
    // Whole-batch retry: events that did arrive may arrive twice unless enable.idempotence.
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::duration_cast<std::chrono::milliseconds>(kRetryBackoffMax));
  }
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
  producer_.reset();
  const SinkCounters c = counters();
  spdlog::info("sink {}: stopped; {} events sent, {} failed, {} left in the channel by this sink", name_,
               c.events_sent, c.events_failed, c.events_undelivered_at_exit);
}

SinkCounters KafkaSink::counters() const {
  SinkCounters c;
  c.events_taken = counters_->taken.load();
  c.events_sent = counters_->sent.load();
  c.events_failed = counters_->failed.load();
  c.events_rolled_back = counters_->rolled_back.load();
  c.events_undelivered_at_exit = counters_->undelivered_at_exit.load();
  c.batches = counters_->batches.load();
  return c;
}

}  // namespace sluice::kafka
