#include "sinks/kafka/kafka_sink.h"

#include <charconv>

#include "sinks/kafka/flume_event.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "agent/api/event_json.h"
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
constexpr auto kRetryBackoffMin = 100ms;
constexpr auto kRetryBackoffMax = 10s;
// At the shutdown deadline, how much longer requests already in flight may take to be answered
// before they are purged too (their events then go back to the channel as possibly persisted).
constexpr auto kInFlightGrace = 1s;
// Between new producers (after fatal errors, stalled partitions): doubling from 1 s to a minute.
constexpr std::chrono::milliseconds kProducerBackoffMin = 1s;
constexpr std::chrono::milliseconds kProducerBackoffMax = 60s;
// A stalled producer's other partitions get this long to send what waits for them.
constexpr std::chrono::milliseconds kStalledFlush = 1s;
// Stalls this close together lengthen the limit for the next producer, up to kStallLimitMax.
constexpr std::chrono::milliseconds kStallMemory = 30min;
constexpr std::chrono::milliseconds kStallLimitMax = 10min;
// The sink's own destination not served: how often the loop looks again, and how long before a sink
// of a group says so to its group.
constexpr int kNotServedPollMs = 50;
constexpr auto kGroupPatience = 2s;
// unblock_window(): a head of the window older than this, waiting only for partitions the cluster
// says have no leader, makes the producer give back what it has not sent (once a second at most).
constexpr auto kUnblockAfter = 1s;
constexpr auto kUnblockAgain = 5s;

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

// The takes at the head of the window whose every report has come, in order.
void KafkaSink::settle_finished() {
  while (!window_.empty() && window_.front()->done()) settle_front();
}

void KafkaSink::settle_front() {
  AwaitedTake* awaited = window_.front();
  window_.pop_front();
  settle(*awaited);
  probe_->batch_done(Clock::now() - awaited->taken_at);
  awaited->release();
  if (window_.empty()) roll_back_window();
}

// Each rollback goes to the front of the channel: the newest take first, so that the oldest
// ends up in front and the retry keeps the order taken. (A take delivered after an older one
// failed is committed meanwhile: with a window, a failure reorders what is retried behind it.)
void KafkaSink::roll_back_window() {
  if (window_back_.empty()) return;
  for (size_t i = window_back_.size() - 1; i > 0; --i) put_back(std::move(window_back_[i]));
  roll_back(std::move(window_back_.front()));  // the oldest, and the backoff once for the whole window
  window_back_.clear();
}

// Before the deadline: a second (no more than is left) to send what can be sent.
void KafkaSink::release_stalled_producer() {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(stop_deadline_.get() - Clock::now());
  producer_->release_stalled(std::clamp(left, std::chrono::milliseconds(0), kStalledFlush));
}

// A partition that truly has no leader (its only replica's broker gone) stalls every new producer
// too: each stall soon after the last doubles the limit (to kStallLimitMax), so that the purges that
// come with it thin out while the rest flows; a stall long after the last starts from the setting.
void KafkaSink::lengthen_stall_limit() {
  const auto now = Clock::now();
  const bool soon_after = last_stall_at_ != Clock::time_point{} && now - last_stall_at_ < kStallMemory;
  stall_limit_ = soon_after ? std::min(stall_limit_ * 2, std::max(kStallLimitMax, config_.stalled_partition_timeout))
                            : config_.stalled_partition_timeout;
  last_stall_at_ = now;
}

// The producer in use, from now on: the topics in use are taken up with it, and with acks=0 the
// sink hears of lost connections (what was written to them last is possibly lost).
void KafkaSink::use_producer() {
  destinations_.attach(producer_);
  if (config_.acks == "0") producer_->add_watcher(probe_);
  if (!config_.wait_for_delivery) producer_->handing_over(+1);
}

// The producer in use is left (replaced, or the sink stops).
void KafkaSink::leave_producer() {
  producer_->remove_watcher(probe_.get());
  if (!config_.wait_for_delivery) producer_->handing_over(-1);
}

// librdkafka's remedy for a fatal error, and ours for a stalled partition, is a new producer.
// What the old one held has been settled by now (acks >= 1: rolled back; acks = 0: counted as
// lost when it is destroyed).
void KafkaSink::replace_producer() {
  std::string reason;
  if (!producer_->needs_replacing(&reason)) return;
  // Not yet (the backoff) or not any more (stopping): the loop polls and asks again.
  if (Clock::now() < next_producer_at_ || stop_deadline_.passed()) return;
  std::shared_ptr<Producer> fresh;
  try {
    if (producer_->stalled()) lengthen_stall_limit();
    fresh = env_->producer(producer_settings_, config_.share_producer, stall_limit_);
  } catch (const config::ConfigError& e) {
    spdlog::error("sink {}: cannot create a new Kafka producer: {}; retrying in {} s", name_, e.what(),
                  producer_backoff_.count() / 1000);
  }
  next_producer_at_ = Clock::now() + producer_backoff_;
  producer_backoff_ = std::min(producer_backoff_ * 2, kProducerBackoffMax);
  if (!fresh) return;
  leave_producer();
  std::atomic_store(&producer_, std::move(fresh));
  use_producer();
  probe_->producer_replaced(reason);
}

void KafkaSink::add_message(const EventBatch& batch, const EventRecord& e) {
  OutgoingMessage& m = messages_.emplace_back();
  if (config_.flume_event_format) {
    // The arena may still move as it grows: offsets now, pointers in produce_messages().
    const size_t start = json_.size();
    std::string body;
    if (config_.format == PayloadFormat::json)
      append_event_json(batch, e, body);
    else
      body = config_.format == PayloadFormat::raw ? batch.raw(e) : batch.body(e);
    append_flume_event(batch.all_headers(e), body, json_);
    m.payload = reinterpret_cast<const char*>(start);
    m.length = json_.size() - start;
  } else if (config_.format == PayloadFormat::json) {
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
  if (lookups_.key) {
    // librdkafka copies keys, but only at produce(): numeric keys need a home until then.
    char* scratch = key_scratch_.emplace_back().data();
    const std::optional<std::string_view> key = batch.header(e, config_.key_header, scratch);
    if (key && !key->empty()) {  // none: no key, the sink picks the partition
      m.key = key->data();
      m.key_length = key->size();
    }
  }
  if (!config_.headers.empty()) {
    // Views into headers_, which send() reserved for the whole take: it does not move.
    const size_t first = headers_.size();
    for (const RecordHeaderField& h : config_.headers) {
      const std::optional<std::string_view> value = batch.header(e, h.header, key_scratch_.emplace_back().data());
      if (value && !value->empty()) headers_.push_back({h.name, *value});
    }
    m.headers = std::span<const MessageHeader>(headers_.data() + first, headers_.size() - first);
  }
  // The partition, when the sink's settings or the event choose it (-1: its key, or the sink, will).
  m.partition = static_cast<int32_t>(config_.partition);
  if (!config_.partition_header.empty()) {
    // Without a usable header: defaultPartitionId (key), or the partitioner.
    m.partition = static_cast<int32_t>(config_.partition);
    char scratch[24];
    const std::optional<std::string_view> value =
        lookups_.partition ? batch.header(e, config_.partition_header, scratch) : std::nullopt;
    int32_t partition = -1;
    const char* end = value ? value->data() + value->size() : nullptr;
    if (value && std::from_chars(value->data(), end, partition) == std::from_chars_result{end, std::errc()} &&
        partition >= 0)
      m.partition = partition;
    else
      ++partition_header_unusable_;
  }
  if (lookups_.topic || !config_.topic_template.empty()) {
    // topics_ stays empty while no event has a topic of its own (one produce call for the take);
    // the first that has one gives every message before it the sink's topic ("").
    std::optional<std::string> topic;  // nullopt: the sink's topic
    char scratch[24];
    if (const auto chosen = lookups_.topic ? batch.header(e, config_.topic_header, scratch) : std::nullopt) {
      topic = std::string(*chosen);  // even empty: the event's own, which Kafka refuses (discarded, counted)
    } else if (!config_.topic_template.empty()) {
      topic.emplace();
      // Flume's %{header}: a header the event lacks is an empty string (counted).
      for (const TopicTemplate::Part& part : config_.topic_template.parts) {
        if (part.header.empty()) {
          *topic += part.text;
        } else if (const auto value = batch.header(e, part.header, scratch)) {
          *topic += *value;
        } else {
          ++topic_header_missing_;
        }
      }
    }
    // A name Kafka would refuse stays the event's (discarded as invalid_topic, without asking);
    // another is the event's if the sink allows it, else the sink's own topic (counted).
    if (topic && is_valid_topic_name(*topic)) {
      topic = destinations_.topic_for_event(*topic);
      if (!topic && !config_.topic_template.empty()) topic.emplace();  // no own topic to go to: discarded
    }
    if (topic || !topics_.empty()) {
      topics_.resize(messages_.size() - 1);
      topics_.push_back(std::move(topic));
    }
  }
}

void KafkaSink::prepare_lookups(const EventBatch& batch) {
  lookups_ = {.key = !config_.key_header.empty() && batch.may_have(config_.key_header),
              .partition = batch.may_have(config_.partition_header),
              .topic = !config_.topic_header.empty() && batch.may_have(config_.topic_header)};
}

Destination KafkaSink::destination_of(size_t index) const {
  return {.topic_from_event = !topics_.empty() && topics_[index].has_value(),
          .partition_from_event = !config_.partition_header.empty()};
}

size_t KafkaSink::produce_messages() {
  const bool copied = config_.format == PayloadFormat::json || config_.flume_event_format;
  if (copied)
    for (OutgoingMessage& m : messages_) m.payload = json_.data() + reinterpret_cast<size_t>(m.payload);
  topics_.resize(topics_.empty() ? 0 : messages_.size());  // after the last with a topic of its own: the sink's
  // One produce call per run of messages bound for the same topic, and refused or not (route()
  // refused some already); a fixed partition when the run has one.
  const std::span<OutgoingMessage> all(messages_);
  const auto topic_at = [&](size_t i) -> const std::string& {
    return !topics_.empty() && topics_[i] ? *topics_[i] : config_.topic;
  };
  size_t start = 0, refused = 0;
  for (size_t i = 1; i <= messages_.size(); ++i) {
    if (i < messages_.size() && (messages_[i].refusal != 0) == (messages_[start].refusal != 0) &&
        (topics_.empty() || topics_[i] == topics_[start]))
      continue;
    const std::span<OutgoingMessage> run = all.subspan(start, i - start);
    if (run.front().refusal) {
      refused += run.size();
    } else {
      const std::string& topic = topic_at(start);
      const bool one_partition = std::all_of(
          run.begin(), run.end(), [&](const OutgoingMessage& m) { return m.partition == run.front().partition; });
      const ProduceOptions options{.copy_payloads = copied,
                                   .with_headers = !config_.headers.empty(),
                                   .partition_count = destinations_.view(topic).partition_count()};
      refused += producer_->produce(topic, one_partition ? run.front().partition : Producer::kPerMessage, run,
                                    stop_deadline_, options);
    }
    start = i;
  }
  return refused;
}

// Each message's partition and fate. The sink's own topic with one partition for every message
// (pinned: the seed's shape) is decided once; otherwise message by message, each topic's view
// asked once per take.
Take KafkaSink::route(Take take) {
  const size_t n = messages_.size();
  const bool per_message = !topics_.empty() || !config_.partition_header.empty() || config_.partition < 0;
  if (!per_message && n > 0) {
    // Every message to the sink's own topic and pinned partition (the seed's shape): one decision,
    // and nothing to do per message while that partition is served.
    const Destinations::Decision d =
        destinations_.decide(config_.topic, destinations_.view(config_.topic), messages_[0].partition, {}, false);
    if (d.fate == Fate::produce) return take;
    fates_.assign(n, d.fate);
    if (d.fate == Fate::refuse)
      for (OutgoingMessage& m : messages_) m.refusal = d.refusal;
  } else {
    fates_.assign(n, Fate::produce);
  }
  bool all_produced = per_message;  // (the take's one decision above was not to produce)
  const std::string* last_topic = nullptr;
  const TopicView* view = nullptr;
  bool valid = true;
  for (size_t i = 0; per_message && i < n; ++i) {
    OutgoingMessage& m = messages_[i];
    const std::string& topic = !topics_.empty() && i < topics_.size() && topics_[i] ? *topics_[i] : config_.topic;
    if (!last_topic || *last_topic != topic) {
      last_topic = &topic;
      valid = is_valid_topic_name(topic);
      if (valid) view = &destinations_.view(topic);
    }
    if (!valid) {  // Kafka would refuse the name (e.g. "postfix/smtpd"): no need to ask it
      fates_[i] = Fate::refuse;
      m.refusal = kErrTopicException;
      all_produced = false;
      continue;
    }
    const Destinations::Decision d = destinations_.decide(
        topic, *view, m.partition, std::string_view(m.key ? m.key : "", m.key_length), m.key != nullptr);
    m.partition = d.partition;
    fates_[i] = d.fate;
    if (d.fate == Fate::refuse) m.refusal = d.refusal;
    all_produced &= d.fate == Fate::produce;
  }
  if (all_produced) return take;
  // What waits goes aside, one part per destination in the order taken; the rest stays.
  std::vector<Take> parts;
  std::vector<std::pair<std::string, int32_t>> part_destinations;
  std::vector<size_t> part_of(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (fates_[i] != Fate::aside) continue;
    std::pair<std::string, int32_t> destination{
        !topics_.empty() && i < topics_.size() && topics_[i] ? *topics_[i] : config_.topic, messages_[i].partition};
    const auto known = std::find(part_destinations.begin(), part_destinations.end(), destination);
    part_of[i] = static_cast<size_t>(known - part_destinations.begin()) + 1;
    if (known == part_destinations.end()) {
      part_destinations.push_back(std::move(destination));
      parts.emplace_back();
    }
  }
  if (parts.empty()) return take;  // refused ones only: they stay, to be settled as refused
  Take kept;
  split_take_into(
      take, [&](size_t i) { return part_of[i]; }, kept, parts);
  const auto now = Clock::now();
  for (size_t k = 0; k < parts.size(); ++k) {
    const bool from_event = part_destinations[k].first != config_.topic || !config_.topic_template.empty();
    probe_->set_aside(parts[k].events);
    aside_.add({.topic = std::move(part_destinations[k].first),
                .partition = part_destinations[k].second,
                .topic_from_event = from_event,
                .take = std::move(parts[k]),
                .since = now});
  }
  // The messages that stay, in order (their payloads, keys and headers live in the scratch).
  size_t kept_count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (fates_[i] == Fate::aside) continue;
    messages_[kept_count] = messages_[i];
    if (!topics_.empty()) topics_[kept_count] = i < topics_.size() ? std::move(topics_[i]) : std::nullopt;
    ++kept_count;
  }
  messages_.resize(kept_count);
  if (!topics_.empty()) topics_.resize(kept_count);
  return kept;
}

void KafkaSink::send(Take take) {
  messages_.clear();
  json_.clear();
  key_scratch_.clear();
  topics_.clear();
  headers_.clear();
  headers_.reserve(take.events * config_.headers.size());
  key_scratch_.reserve(take.events * (!config_.key_header.empty() + config_.headers.size()));
  for (const EventBatch& batch : take.batches) {
    prepare_lookups(batch);
    for (const EventRecord& e : batch) add_message(batch, e);
  }
  probe_->headers_missed(std::exchange(topic_header_missing_, 0), std::exchange(partition_header_unusable_, 0));
  if (!topics_.empty()) topics_.resize(messages_.size());  // after the last with a topic of its own: the sink's
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
  for (size_t i = 0; i < messages_.size(); ++i) messages_[i].tracker = awaited->tracker(i);
  awaited->partitions.resize(messages_.size());
  for (size_t i = 0; i < messages_.size(); ++i) awaited->partitions[i] = messages_[i].partition;
  if (!topics_.empty()) {
    awaited->topic_from_event.resize(topics_.size());
    for (size_t i = 0; i < topics_.size(); ++i) awaited->topic_from_event[i] = topics_[i].has_value();
    awaited->topics = topics_;
  }
  window_.push_back(awaited);
  if (produce_messages() > 0)
    for (const OutgoingMessage& m : messages_)
      if (m.refusal) m.tracker->on_delivery(report_of(m.refusal));
}

// What waits aside and may go now goes, in the order taken, as long as the window has room;
// what can never go (its topic is missing or refused) is settled as refused.
void KafkaSink::send_aside() {
  if (aside_.empty()) return;
  const auto now = Clock::now();
  std::vector<Take> ready;
  std::vector<std::pair<AsideTake, int>> refused;  // and the refusal
  aside_.take_out_if([&](AsideTake& entry) {
    int refusal = 0;
    switch (destinations_.fate_of_aside(entry.topic, entry.partition, &refusal)) {
      case Fate::aside: return false;
      case Fate::produce:
        // In takes of at most batchSize (an entry grows with every take while it waits), as far as
        // the window has room.
        while (!entry.take.empty() && !(config_.wait_for_delivery && window_.size() + ready.size() >= max_in_flight_))
          ready.push_back(take_front(entry.take, batch_size_));
        return entry.take.empty();
      case Fate::refuse: refused.emplace_back(std::move(entry), refusal); return true;
    }
    return false;
  });
  for (auto& [entry, refusal] : refused) settle_refused_aside(std::move(entry), refusal, now);
  for (Take& take : ready) send(std::move(take));  // routed again: a part may go aside again
}

// An aside part whose topic the cluster does not have (and the sink may not create) or refuses:
// discarded when the topic came from the event (as a failed delivery would be), counted.
void KafkaSink::settle_refused_aside(AsideTake entry, int refusal, Clock::time_point now) {
  const DeliveryReport report = report_of(refusal);
  uint64_t by_reason[kDeliveryErrorKinds] = {};
  by_reason[static_cast<int>(report.error)] = entry.take.events;
  const bool discard = classify(report.error, {.topic_from_event = entry.topic_from_event}) == ErrorClass::discard;
  count_failures(by_reason, report.text, discard ? entry.take.events : 0, discard ? 0 : entry.take.events);
  if (discard) {
    probe_->discarded(entry.take.events);
    channel_.commit(entry.take);
    probe_->committed(entry.take, now);
  } else {
    roll_back(std::move(entry.take));
  }
}

void KafkaSink::give_back_aside() {
  if (aside_.empty()) return;
  std::deque<AsideTake> all = aside_.take_all();
  // The newest first, each to the channel's front: the oldest ends up in front.
  for (auto it = all.rbegin(); it != all.rend(); ++it) put_back(std::move(it->take));
  probe_->aside_now(0);
}

// A head of the window that waits only for messages whose partitions the cluster says have no
// leader would wait for as long as that lasts, and every take behind it with it: librdkafka gives
// back what it has not sent (all of the producer's: those of other partitions go back to the
// channel too, unsent, and are taken again), and the take settles; taken again, the events of the
// partition without a leader go aside.
void KafkaSink::unblock_window() {
  // A shared producer may hold another sink's messages handed over (acks=0, committed when
  // librdkafka took them): a purge would lose them. Sinks that wait for their reports only retry.
  if (window_.empty() || producer_->handed_over_to()) return;
  const auto now = Clock::now();
  const AwaitedTake& head = *window_.front();
  // Once a second at most, and for one head once every kUnblockAgain: what it has in flight comes
  // back (refused by the broker) and is retried, then queued, and only then can be given back; each
  // purge sends every other queued message of the producer back to the channel meanwhile.
  if (head.done() || now - head.taken_at < kUnblockAfter || now - last_unblock_ < kUnblockAfter ||
      (&head == last_unblocked_head_ && now - last_unblock_ < kUnblockAgain))
    return;
  bool waiting = false;
  for (size_t i = 0; i < head.partitions.size(); ++i) {
    if (head.answered(i)) continue;
    const std::string& topic = !head.topics.empty() && head.topics[i] ? *head.topics[i] : config_.topic;
    const TopicView& v = destinations_.view(topic);
    if (v.known != TopicView::Known::exists || v.leader(head.partitions[i]) >= 0) return;  // it may yet be sent
    waiting = true;
  }
  if (!waiting) return;
  last_unblock_ = now;
  last_unblocked_head_ = &head;
  probe_->unblocked();
  producer_->purge(false);
}

// Shutting down and out of time: first what librdkafka has not sent is purged (it never
// reaches the broker, or, if it had been sent before and waits for a retry, reports
// possibly_persisted); requests in flight get kInFlightGrace more to be answered, then they are
// purged too, again and again (a request partly written to a stalled socket cannot be purged
// until the connection drops). After one more kInFlightGrace the sink stops waiting: what is
// still unanswered goes back to the channel as possibly persisted.
void KafkaSink::enforce_deadline() {
  const auto now = Clock::now();
  if (in_flight_at_ == Clock::time_point{}) {
    producer_->purge(false);
    in_flight_at_ = now + kInFlightGrace;
    give_up_at_ = in_flight_at_ + kInFlightGrace;
  } else if (now >= give_up_at_) {
    spdlog::error(
        "sink {}: requests still unanswered {} ms after the shutdown deadline; their events go back to "
        "the channel as possibly persisted",
        name_, std::chrono::duration_cast<std::chrono::milliseconds>(now - stop_deadline_.get()).count());
    while (!window_.empty()) settle_front();
  } else if (now >= in_flight_at_) {
    producer_->purge(true);
  }
}

// acks=0: committed once librdkafka has taken the batch; that is all acks=0 promises. What it
// refused goes back to the channel (retriable, or the shutdown deadline passed while its queue
// was full) or is discarded (retrying cannot help).
void KafkaSink::hand_over(Take take, Clock::time_point taken_at) {
  auto* in_flight = new HandedOverTake(std::move(take), probe_);
  for (OutgoingMessage& m : messages_) m.tracker = in_flight;
  const size_t refused = produce_messages();
  if (refused == 0) {
    channel_.commit(in_flight->take());  // shares the batches: no copy of events
    probe_->sent(in_flight->take().events);
    probe_->committed(in_flight->take(), taken_at);
    in_flight->release();
    group_.settled(true);
    producer_backoff_ = kProducerBackoffMin;  // the producer works
    return;
  }
  uint64_t by_reason[kDeliveryErrorKinds] = {};
  uint64_t discarded = 0;
  int text_code = 0;
  Take leaving, back;
  split_take(
      in_flight->take(),
      [&](size_t i) {
        const OutgoingMessage& m = messages_[i];
        if (!m.refusal) return true;
        const DeliveryReport report = report_of(m.refusal);
        ++by_reason[static_cast<int>(report.error)];
        text_code = m.refusal;
        const bool discard = classify(report.error, destination_of(i)) == ErrorClass::discard;
        discarded += discard;
        return discard;
      },
      leaving, back);
  count_failures(by_reason, report_of(text_code).text, discarded, back.events);
  probe_->discarded(discarded);
  probe_->sent(leaving.events - discarded);
  channel_.commit(leaving);
  probe_->committed(leaving, taken_at);
  in_flight->release(static_cast<int64_t>(refused) + 1);  // no report comes for what librdkafka refused
  group_.settled(back.empty());
  roll_back(std::move(back));
}

// One line and the counters per reason for the events of a take that were not delivered.
void KafkaSink::count_failures(const uint64_t (&by_reason)[kDeliveryErrorKinds], const std::string& text,
                               uint64_t discarded, uint64_t rolled_back) {
  std::string consequence;
  if (discarded) consequence = fmt::format("{} discarded (retrying cannot help; counted)", discarded);
  if (rolled_back)
    consequence += fmt::format("{}{} back to channel {}, retried in {} ms", consequence.empty() ? "" : ", ",
                               rolled_back, channel_.name(), backoff_.count());
  for (int r = 0; r < kDeliveryErrorKinds; ++r)
    if (by_reason[r]) probe_->failed(static_cast<DeliveryError>(r), by_reason[r], text, consequence);
}

// Commits what was delivered, discards what can never be (counted by reason), and rolls the
// rest back into the channel: only the failed events, so delivered ones are not sent twice.
void KafkaSink::settle(const AwaitedTake& awaited) {
  uint64_t by_reason[kDeliveryErrorKinds] = {};
  uint64_t discarded = 0, possibly_persisted = 0;
  Take leaving, back;
  split_take(
      awaited.take(),
      [&](size_t i) {
        if (!awaited.answered(i)) {  // given up at shutdown: in flight, the broker may have it
          ++by_reason[static_cast<int>(DeliveryError::purged)];
          ++possibly_persisted;
          return false;
        }
        const DeliveryError error = awaited.error(i);
        if (error == DeliveryError::none) return true;
        ++by_reason[static_cast<int>(error)];
        const Destination destination{
            .topic_from_event = !awaited.topic_from_event.empty() && awaited.topic_from_event[i],
            .partition_from_event = !config_.partition_header.empty()};
        if (classify(error, destination) == ErrorClass::discard) {
          ++discarded;
          return true;
        }
        possibly_persisted += awaited.possibly_persisted(i);
        return false;
      },
      leaving, back);
  count_failures(by_reason, awaited.text(), discarded, back.events);
  probe_->discarded(discarded);
  probe_->sent(leaving.events - discarded);
  // At least once: the broker may have these already; sending them again may duplicate them.
  if (possibly_persisted) probe_->possibly_duplicated(possibly_persisted);
  if (back.empty() && leaving.events > discarded) producer_backoff_ = kProducerBackoffMin;  // the producer works
  channel_.commit(leaving);
  probe_->committed(leaving, awaited.taken_at);
  group_.settled(back.empty());
  if (!back.empty())
    window_back_.push_back(std::move(back));
  else if (window_back_.empty())
    backoff_ = kRetryBackoffMin;  // delivered, and nothing older failed
}

// Puts undelivered events back at the front of the channel and backs off before the next
// take (doubling to 10 s), but never past the shutdown deadline.
void KafkaSink::roll_back(Take back) {
  if (back.empty()) {
    backoff_ = kRetryBackoffMin;
    return;
  }
  put_back(std::move(back));
  resume_at_ = Clock::now() + backoff_;  // no new take before then; reports are served meanwhile
  backoff_ = std::min(backoff_ * 2, std::chrono::duration_cast<std::chrono::milliseconds>(kRetryBackoffMax));
}

void KafkaSink::put_back(Take back) {
  probe_->rolled_back(back.events);
  channel_.rollback(std::move(back));
}

void KafkaSink::request_stop(Deadline deadline) {
  if (draining_.exchange(true)) return;
  stop_deadline_.set(deadline);
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
  // every header, each at most an event's bytes) are copies: one take's in the sink's scratch, and
  // with acks >= 1 those of the takes in flight in librdkafka (with acks = 0 its queue's byte bound
  // above holds them).
  uint64_t copy = 0;
  if (config_.format == PayloadFormat::json) copy = 6 * context.max_event_bytes + 256;
  if (config_.flume_event_format) copy = (copy ? copy : context.max_event_bytes) + context.max_event_bytes + 1024;
  if (copy) {
    const uint64_t takes = 1 + (config_.wait_for_delivery ? config_.takes_in_flight : 0);
    bound = add(bound, times(times(takes, batch_size_), copy));
  }
  return bound;
}

std::string KafkaSink::ready_info() const {
  if (config_.bootstrap != kEmbedded || !env_->embedded()) return {};
  return "embedded.bootstrap=" + env_->embedded()->bootstrap_servers() + "\n";
}

}  // namespace sluice::kafka
