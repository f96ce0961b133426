// The Kafka sink's loop: built, started, taking while its turn says so, stopped; its memory
// bound. Its other rooms: routing and what waits aside (kafka_sink_routing.cc), the delivery
// window (delivery_window.cc), the stall remedy (stall_remedy.cc); messages are made by its
// RequestBuilder (request_builder.h), its settings read by kafka_sink_config.cc.
#include "sinks/kafka/kafka_sink.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "sinks/kafka/delivery_tracker.h"

namespace sluice::kafka {
namespace {

constexpr int kGroupMessageTimeoutMs = 30000;

std::unique_ptr<Sink> make_kafka_sink(const config::ComponentConfig& component, Channel& channel,
                                      BuildContext& context) {
  KafkaSinkConfig c = parse_kafka_sink_config(component);
  c.batch_size = batch_size_for(component, "batchSize", c.batch_size, channel);
  if (context.sink_group) {
    // In a sink group a sink must be able to fail, or its group never fails over: an unreachable
    // cluster fails its takes after 30 s unless message.timeout.ms says otherwise...
    const auto timeout = c.producer.find("message.timeout.ms");
    if (!c.producer.count("delivery.timeout.ms") && (timeout == c.producer.end() || timeout->second.where.line == 0))
      c.producer["message.timeout.ms"] = {
          std::to_string(kGroupMessageTimeoutMs), {}, "message.timeout.ms (default in a sink group)"};
    // ...and with acks=0 a take is committed only once librdkafka has sent it (its delivery
    // reports), not when it takes it: what a cluster that is down did not get goes back to the
    // channel for the group's other sinks instead of waiting in librdkafka.
    c.wait_for_delivery = true;
  }
  std::shared_ptr<KafkaEnvironment> kafka = context.shared.get<KafkaEnvironment>();
  // Enough partitions for a pinned sink; ten for an unpinned one, like the seed's topic.
  if (c.topic_template.empty())
    kafka->require_topic(c.bootstrap, c.topic, c.partition >= 0 ? static_cast<int>(c.partition) + 1 : 10);
  return std::make_unique<KafkaSink>(component.name, std::move(c), channel, std::move(kafka), context.sink_group);
}

using namespace std::chrono_literals;
constexpr auto kTakeWait = 100ms;
// The sink's own destination not served: how often the loop looks again, and how long before a sink
// of a group says so to its group.
constexpr int kNotServedPollMs = 50;
constexpr auto kGroupPatience = 2s;

DestinationSettings destination_settings(const KafkaSinkConfig& c) {
  return {.own_topic = c.topic_template.empty() ? c.topic : std::string(),
          .pinned_partition = c.partition_header.empty() ? static_cast<int32_t>(c.partition) : -1,
          .allowed_topics = c.allowed_topics.get(),
          .max_topics = c.max_topics,
          .create_event_topics = c.create_event_topics};
}

}  // namespace

const ComponentSpec kKafkaSinkSpec{
    .kind = config::Kind::sink,
    .type = "kafka",
    .aliases = {"org.apache.flume.sink.kafka.KafkaSink", "com.igloosec.KafkaSink"},
    .doc =
        "Produces events to Kafka with librdkafka, a batch per take, without copying them.\n\n"
        "Producer settings: `kafka.producer.<name>` passes a librdkafka (Kafka producer) property through; so does "
        "`kafka.<name>`, with the Kafka 0.8 names the seed uses mapped onto librdkafka's: `request.required.acks` -> "
        "`acks`, `send.buffer.bytes` -> `socket.send.buffer.bytes`, `queue.buffering.max.message` (sic) -> "
        "`queue.buffering.max.messages` (with a warning), `compression.codec` 0/1/2 -> none/gzip/snappy; "
        "`kafka.producer.type = sync` commits only after delivery reports, as acks >= 1 does; `requiredAcks` -> `acks`. "
        "A property librdkafka refuses stops start-up with its message and the line. `acks` defaults to 1 (Flume's "
        "default). With acks=0 an event is committed once librdkafka has taken it; with acks >= 1 once its "
        "delivery report succeeded. A failed event goes back to the channel and is retried with backoff, or is "
        "discarded and counted when retrying cannot help (too large, invalid, a topic or partition from the event "
        "that does not exist). With acks >= 1 `message.timeout.ms` defaults to 0 (librdkafka retries for as long "
        "as an outage lasts) unless set; in a sink group it defaults to 30000, so that an unreachable cluster "
        "fails the sink's takes and the group turns to its other sinks.",
    .describe = [] { return config::describe(kKafkaSinkProperties); },
    .make_sink = &make_kafka_sink,
    .write_type_metrics = &KafkaSinkProbe::write_type_metrics,
};

KafkaSink::KafkaSink(std::string name, KafkaSinkConfig config, Channel& channel, std::shared_ptr<KafkaEnvironment> env,
                     SinkGroupMember group)
    : name_(std::move(name)),
      config_(std::move(config)),
      channel_(channel),
      env_(std::move(env)),
      batch_size_(config_.batch_size),
      probe_(std::make_shared<KafkaSinkProbe>(name_)),
      max_in_flight_(config_.takes_in_flight),
      group_(std::move(group)),
      stall_limit_(config_.stalled_partition_timeout),
      destinations_(destination_settings(config_), probe_),
      aside_(AsideTakes::bound_for(channel, batch_size_)) {
  destinations_.set_busy([this](const std::string& topic) { return aside_.holds(topic); });
}

KafkaSink::~KafkaSink() {
  if (thread_.joinable()) stop(Clock::now());
}

void KafkaSink::start() {
  env_->start();  // the embedded cluster, once, by the first sink that starts
  producer_settings_ = config_.producer;
  producer_settings_["bootstrap.servers"] =
      ProducerSetting{env_->resolve_bootstrap(config_.bootstrap), {}, "brokerList"};
  // sslReloadInterval: the files as the producer is about to read them are the ones watched.
  std::vector<std::string> tls_paths;
  for (const char* key :
       {"ssl.certificate.location", "ssl.key.location", "ssl.ca.location", "ssl.keystore.location", "ssl.crl.location"})
    if (const auto it = producer_settings_.find(key); it != producer_settings_.end() && !it->second.value.empty())
      tls_paths.push_back(it->second.value);
  if (config_.ssl_reload_interval.count() > 0 && !tls_paths.empty())
    tls_files_ = std::make_unique<FileWatch>(std::move(tls_paths));
  std::atomic_store(&producer_, env_->producer(producer_settings_, config_.share_producer, stall_limit_));
  use_producer();
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    leave_producer();  // no stop() will
    throw;
  }
  const auto idempotence = producer_settings_.find("enable.idempotence");
  const bool idempotent = idempotence != producer_settings_.end() && idempotence->second.value == "true";
  spdlog::info("sink {}: topic {} partition {} on {} (acks={}, {} per batch, commit {}{})", name_, config_.topic,
               config_.partition >= 0 ? std::to_string(config_.partition) : "by key or one served per take",
               producer_settings_["bootstrap.servers"].value, config_.acks, batch_size_,
               config_.wait_for_delivery ? "after delivery reports" : "when librdkafka takes the batch",
               config_.wait_for_delivery && !idempotent
                   ? "; without enable.idempotence a retry after a lost answer may store a message twice"
                   : "");
}

// acks >= 1 keeps up to maxTakesInFlight takes in flight (a window), settled strictly in the
// order they were taken as their delivery reports complete; acks = 0 hands each take over and
// goes on. Past the stop deadline no new take starts and the window is settled or given up.
void KafkaSink::run() {
  while (true) {
    bound_questions(*producer_);  // a producer made meanwhile too
    look_at_tls_files();
    settle_finished();
    if (producer_->stalled() && !stop_deadline_.passed()) release_stalled_producer();  // its takes settle...
    if (window_.empty() && !retiring_.load() && producer_->needs_replacing()) replace_producer();  // ...then
    if (stop_deadline_.passed() || retiring_.load()) {
      // Stopping: what waits aside goes back to the channel; only what was sent is settled (past
      // the deadline, or given up).
      give_back_aside();
      if (window_.empty()) break;
      if (stop_deadline_.passed()) enforce_deadline();
      producer_->poll(10);
      continue;
    }
    const Turn turn = next_turn();
    if (turn == Turn::done) break;
    if (turn == Turn::wait) continue;
    Take take = channel_.take(batch_size_, Clock::now() + (window_.empty() ? kTakeWait : std::chrono::milliseconds(0)));
    if (take.empty()) {
      group_.took_nothing();
      producer_->poll(window_.empty() ? 0 : 10);
      // In a group, what another member took may still come back to the channel (its delivery
      // failed): done once the channel holds nothing, taken or not.
      if (draining_.load() && window_.empty() && aside_.empty() && (!group_ || channel_.counters().events_held == 0))
        break;
      continue;
    }
    probe_->taken(take.events);
    send(std::move(take));
    producer_->poll(0);
  }
  // Done with the view (the flush in stop() needs only librdkafka): it winds down beside the other
  // sinks' rather than one after another as each producer is destroyed. A shared producer's serves
  // sinks that may go on (a reload).
  if (!config_.share_producer) producer_->stop_asking();
}

// Before a take: the window has room, nothing failed waits to go back, no backoff, a producer that
// works, what waits aside has had its chance, the sink's own destination is served, and its group
// lets it take. Polls librdkafka (serving reports) whenever the answer is no; done when stopping
// and nothing is left for it.
KafkaSink::Turn KafkaSink::next_turn() {
  destinations_.forget_take();  // what the cluster view says is asked again for each take
  unblock_window();
  if (window_.size() >= max_in_flight_ || !window_back_.empty() || Clock::now() < resume_at_ ||
      producer_->needs_replacing()) {
    producer_->poll(10);  // serves delivery reports while the window is full, failed or backing off
    return Turn::wait;
  }
  send_aside();
  // In a sink group, events that wait aside too long (a partition of this sink's cluster without a
  // leader) go back to the channel, and the sink fails its turn: the group's other sinks take them.
  if (group_ && !aside_.empty() && Clock::now() - *aside_.oldest() >= kGroupPatience) {
    give_back_aside();
    group_.settled(false);
  }
  probe_->aside_now(aside_.events());
  probe_->event_topics(destinations_.topics_in_use());
  if (window_.size() >= max_in_flight_) {
    producer_->poll(0);
    return Turn::wait;
  }
  std::string problem;
  if (!destinations_.own_served(&problem)) {
    probe_->destination_waiting(config_.topic, problem);
    const auto now = Clock::now();
    if (not_served_since_ == Clock::time_point{}) not_served_since_ = now;
    // In a group, a sink whose cluster does not take its events (for longer than a start or a
    // topic's creation takes) fails its turn: set aside, the group's other sinks take them (a
    // failed take would have rolled back the same way).
    if (group_ && now - not_served_since_ >= kGroupPatience && group_.may_take()) group_.settled(false);
    if (draining_.load() && window_.empty() && aside_.empty() && channel_.counters().events_held == 0)
      return Turn::done;
    producer_->poll(kNotServedPollMs);
    return Turn::wait;
  }
  probe_->destination_served();
  not_served_since_ = {};
  if (aside_.full()) {
    producer_->poll(10);
    return Turn::wait;
  }
  if (!group_.may_take()) {  // another sink of its group takes now, or this one is set aside
    // Stopping: done once its channel holds nothing more, taken or not, for the group.
    if (draining_.load() && window_.empty() && aside_.empty() && channel_.counters().events_held == 0)
      return Turn::done;
    producer_->poll(10);
    return Turn::wait;
  }
  return Turn::take;
}

void KafkaSink::send(Take take) {
  request_.begin(take);
  for (const EventBatch& batch : take.batches) request_.add(batch);
  probe_->headers_missed(request_.take_topic_headers_missing(), request_.take_partition_headers_unusable());
  std::vector<std::optional<std::string>>& topics = request_.topics();
  if (!topics.empty()) topics.resize(request_.messages().size());  // after the last with a topic of its own: the sink's
  take = route(std::move(take));
  if (take.empty()) return;  // all of it waits aside
  if (!config_.wait_for_delivery) {
    const auto taken_at = Clock::now();
    hand_over(std::move(take), taken_at);
    probe_->batch_done(Clock::now() - taken_at);
    return;
  }
  AwaitedTake* awaited = AwaitedTake::create(std::move(take));
  awaited->taken_at = Clock::now();
  if (config_.acks == "0") awaited->written_to = probe_;
  awaited->encoded = request_.release_encoded();
  std::vector<OutgoingMessage>& messages = request_.messages();
  awaited->partitions.resize(messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    messages[i].tracker = awaited->tracker(i);
    awaited->partitions[i] = messages[i].partition;
  }
  if (!topics.empty()) {
    awaited->topic_from_event.resize(topics.size());
    for (size_t i = 0; i < topics.size(); ++i) awaited->topic_from_event[i] = topics[i].has_value();
    awaited->topics = topics;
  }
  window_.push_back(awaited);
  if (request_.produce(*producer_, stop_deadline_) > 0) {
    awaited->refused_locally.resize(messages.size());
    for (size_t i = 0; i < messages.size(); ++i) {
      if (!messages[i].refusal) continue;
      awaited->refused_locally[i] = true;
      messages[i].tracker->on_delivery(report_of(messages[i].refusal));
    }
  }
}

void KafkaSink::request_stop(Deadline deadline) {
  if (draining_.exchange(true)) return;
  stop_deadline_.set(deadline);
  // Now, not at the sink's next turn: its thread may be waiting in produce() (acks=0, a full queue)
  // until the deadline, and a question asked meanwhile would outlast it.
  bound_current_producer();
}

void KafkaSink::agent_stopping(Deadline deadline) {
  agent_deadline_.set(deadline);
  env_->finish_asking_by(deadline);
  bound_current_producer();
}

// From a thread other than the sink's: the producer it uses now, read as it may be replaced. (If
// the sink's thread replaces it meanwhile, the copy taken here may be the old one's last reference:
// it is then destroyed on this thread, joining its view's question under way. Rare, and a delay,
// not a loss.)
void KafkaSink::bound_current_producer() {
  if (auto producer = std::atomic_load(&producer_)) bound_questions(*producer);
}

// Stopping: the cluster view's questions end by the deadline, not up to a question's time after
// it, which the stop would wait out. A shared producer's view is bounded only when the agent stops
// (the environment's, from agent_stopping): a reload's other sinks go on using it.
void KafkaSink::bound_questions(Producer& producer) {
  const Deadline by = std::min(stop_deadline_.get(), agent_deadline_.get());
  if (!config_.share_producer && by != Deadline::max()) producer.finish_asking_by(by);
}

void KafkaSink::stop(Deadline deadline) {
  if (!thread_.joinable()) return;
  request_stop(deadline);
  deadline = stop_deadline_.get();
  thread_.join();
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  // acks=0: what librdkafka still holds was committed; give it the time left. Whatever is
  // still queued when the (possibly shared) producer is destroyed is purged and reported to
  // its HandedOverTake, which counts it as lost.
  // Retired by a reload with a producer shared with sinks that go on: with acks >= 1 its own
  // messages are all settled (the window is empty), and flushing would wait for theirs.
  const bool shared_and_settled = retiring_.load() && config_.share_producer && config_.wait_for_delivery;
  const int remaining = shared_and_settled ? 0 : producer_->flush(static_cast<int>(std::max<int64_t>(left, 0)));
  if (remaining > 0)
    spdlog::error(
        "sink {}: {} messages still in librdkafka at the shutdown deadline are purged (acks=0: counted as "
        "lost after hand-over; acks >= 1: already back in the channel)",
        name_, remaining);
  destinations_.detach();
  leave_producer();
  std::atomic_store(&producer_, std::shared_ptr<Producer>());
  const SinkCounters c = counters();
  spdlog::info(
      "sink {}: stopped; {} events sent ({} lost after hand-over), {} failed attempts ({} discarded, {} "
      "rolled back for retry, {} possibly duplicated)",
      name_, c.events_sent, c.events_lost_after_handover, c.events_failed, c.events_discarded, c.events_rolled_back,
      c.events_possibly_duplicated);
}

void KafkaSink::retire(Deadline deadline) {
  retiring_.store(true);
  request_stop(deadline);
}

SinkCounters KafkaSink::counters() const {
  SinkCounters c = probe_->counters();
  if (auto producer = std::atomic_load(&producer_)) c.events_queued = producer->queue_length();
  return c;
}

KafkaSinkCounters KafkaSink::kafka_counters() const {
  KafkaSinkCounters c = probe_->kafka_counters();
  if (auto producer = std::atomic_load(&producer_)) c.topic_handles = producer->topics_held();
  return c;
}

void KafkaSink::write_metrics(MetricsWriter& writer) const {
  probe_->write_metrics(writer, std::atomic_load(&producer_).get());
}

// acks = 0 commits when librdkafka reports the message sent, which Kafka never acknowledged.
bool KafkaSink::commits_after_delivery() const { return config_.wait_for_delivery && config_.acks != "0"; }

// librdkafka's own per producer: its threads, broker buffers and the requests being built (one
// message set per partition, compressed; batch.size is 1 MB). Measured: the seed's ten producers
// and the embedded Kafka add 6 MiB to an idle agent; the rest is margin for requests in flight.
constexpr uint64_t kProducerBytes = 8ull << 20;
// Per message librdkafka holds: its rd_kafka_msg_t, queue links, and our delivery bookkeeping.
constexpr uint64_t kMessageOverheadBytes = 512;
// A topic librdkafka keeps a handle for: the handle (1 KiB), each partition's state with its queues
// (1.2 KiB; both sizeof in librdkafka 2.14.2) and its metadata, and our name and LRU entry. 32 KiB
// covers a topic of 20 partitions.
constexpr uint64_t kTopicHandleBytes = 32ull << 10;

uint64_t KafkaSink::memory_bound(const memory::Context& context) const {
  using namespace memory;
  const auto setting = [&](const char* name, uint64_t fallback) {
    const auto it = config_.producer.find(name);
    return it == config_.producer.end() ? fallback : std::stoull(it->second.value);
  };
  // librdkafka 2.0's defaults.
  const uint64_t queued_max = setting("queue.buffering.max.messages", 100'000);
  const uint64_t queued_bytes_max = setting("queue.buffering.max.kbytes", 1'048'576) * 1024;
  // With acks >= 1 what librdkafka holds was taken and not committed: the channel's. With acks = 0
  // it is committed on hand-over, and its bytes are librdkafka's until sent.
  const uint64_t messages =
      config_.wait_for_delivery ? std::min<uint64_t>(queued_max, context.channel_capacity) : queued_max;
  uint64_t bound = add(kProducerBytes, times(messages, kMessageOverheadBytes));
  if (!config_.wait_for_delivery)
    bound = add(bound, std::min(queued_bytes_max, times(queued_max, context.max_event_bytes)));
  // Events aside (aside_takes.h) read back from a disk channel: beside what its take bound counts.
  if (channel_.keeps_contents())
    bound = add(bound, times(AsideTakes::kAsideTakes * batch_size_, context.max_event_bytes + kMessageOverheadBytes));
  // Topics named by events: librdkafka keeps a handle for each (its partitions' state and queues,
  // its metadata), and the sink its name; maxTopics bounds how many at once. Only when an event can
  // carry what names them: a parsed field (app), or a header its sources may set (topic, by an
  // interceptor); else every event goes to `topic`.
  const auto may_carry = [&](const HeaderRef& header) {
    if (header.empty()) return false;
    if (header.field || !context.event_headers) return true;
    const std::vector<std::string>& made = *context.event_headers;
    return std::find(made.begin(), made.end(), header.name) != made.end();
  };
  bool events_name_topics = may_carry(config_.topic_header);
  for (const TopicTemplate::Part& part : config_.topic_template.parts) events_name_topics |= may_carry(part.header);
  if (events_name_topics) bound = add(bound, times(config_.max_topics, kTopicHandleBytes));
  // The JSON format (each payload escaped, up to 6 bytes a byte) and Flume's Avro event (the body and
  // every header, each at most an event's bytes) are written into a buffer per take
  // (request_builder.h) that stays with the take until librdkafka's last report, with as much again
  // of room it may have grown into: the take being built and, with acks >= 1, the takes in flight;
  // with acks = 0 the takes handed over, as many as librdkafka's queue may hold.
  uint64_t copy = 0;
  if (config_.format == PayloadFormat::json) copy = 6 * context.max_event_bytes + 256;
  if (config_.flume_event_format) copy = (copy ? copy : context.max_event_bytes) + context.max_event_bytes + 1024;
  if (copy) {
    const uint64_t takes = 1 + (config_.wait_for_delivery ? config_.takes_in_flight : 0);
    bound = add(bound, times(2, times(times(takes, batch_size_), copy)));
    if (!config_.wait_for_delivery) bound = add(bound, times(2, std::min(queued_bytes_max, times(queued_max, copy))));
  }
  return bound;
}

std::string KafkaSink::ready_info() const {
  if (config_.bootstrap != kEmbedded || !env_->embedded()) return {};
  return "embedded.bootstrap=" + env_->embedded()->bootstrap_servers() + "\n";
}

}  // namespace sluice::kafka
