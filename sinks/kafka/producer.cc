#include "sinks/kafka/producer.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "agent/api/log_limiter.h"
#include "sinks/kafka/recent_writes.h"
#include "sinks/kafka/report_tally.h"

namespace sluice::kafka {

namespace {
thread_local int64_t tl_write_tick = 0;
}  // namespace

int64_t write_tick() { return tl_write_tick; }
void set_write_tick() {
  tl_write_tick =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count() >> kWriteTickShift;
}

namespace {

void on_delivery_report(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  // What the producer holds of the partition, by its own count (the stall watch's).
  if (auto* counters = static_cast<Producer::TopicCounters*>(rd_kafka_topic_opaque(message->rkt));
      counters && message->partition >= 0 && message->partition < counters->capacity.load(std::memory_order_acquire)) {
    Producer::PartitionCounters& c = counters->partitions.load(std::memory_order_acquire)[message->partition];
    tally_count(message->err ? c.failed : c.delivered);
  }
  auto* tracker = static_cast<DeliveryTracker*>(message->_private);
  if (!tracker) return;
  const bool possibly_persisted =
      message->err && rd_kafka_message_status(message) == RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED;
  DeliveryReport report = report_of(message->err, possibly_persisted);
  if (opaque && static_cast<const Producer*>(opaque)->acks_zero()) {  // where it was written (recent_writes.h)
    report.broker = rd_kafka_message_broker_id(message);
    report.tick = write_tick();
  }
  tracker->on_delivery(report);
}

// A broker that stays down makes librdkafka report the same error every few hundred ms:
// log each kind once, then at most every 10 s, saying how many were suppressed.
LogLimiter& limiter_for(const std::string& kind) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<LogLimiter>> limiters;
  std::lock_guard lock(mutex);
  auto& limiter = limiters[kind];
  if (!limiter) limiter = std::make_unique<LogLimiter>();
  return *limiter;
}

std::atomic<uint64_t> g_client_errors{0};

void on_error(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  g_client_errors.fetch_add(1, std::memory_order_relaxed);
  if (code == RD_KAFKA_RESP_ERR__TRANSPORT && opaque) static_cast<Producer*>(opaque)->connection_lost(reason);
  if (code == RD_KAFKA_RESP_ERR__FATAL) {
    char text[512];
    rd_kafka_fatal_error(rk, text, sizeof text);
    spdlog::critical("kafka producer fatal error: {}; its sinks roll back what it held and start a new producer", text);
    return;
  }
  // librdkafka retries these itself and recovers when Kafka comes back; they are worth a line.
  if (auto note = limiter_for(rd_kafka_err2name(code)).next())
    spdlog::warn("kafka: {} ({}){}", reason, rd_kafka_err2name(code), *note);
}

void on_log(const rd_kafka_t*, int level, const char* facility, const char* text) {
  if (level > 4) {
    spdlog::debug("librdkafka {}: {}", facility, text);
    return;
  }
  const auto note = limiter_for(std::string("log:") + facility).next();
  if (!note) return;
  if (level <= 3)
    spdlog::error("librdkafka {}: {}{}", facility, text, *note);
  else
    spdlog::warn("librdkafka {}: {}{}", facility, text, *note);
}

int on_statistics(rd_kafka_t*, char* json, size_t, void* opaque) {
  flush_report_tally();  // the stall watch reads the delivered counts (a flush polls for long)
  if (auto stats = parse_statistics(json)) static_cast<Producer*>(opaque)->observe(std::move(*stats));
  return 0;  // librdkafka frees the JSON
}

// Applies every setting; throws ConfigError naming the first one librdkafka refuses.
rd_kafka_conf_t* build_conf(const ProducerSettings& settings) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  for (const auto& [name, setting] : settings) {
    if (rd_kafka_conf_set(conf, name.c_str(), setting.value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      const std::string shown = setting.written_as.empty() ? name : setting.written_as;
      throw config::ConfigError(setting.where.to_string() + ": " + shown + ": librdkafka refused " + name + "=\"" +
                                setting.value + "\": " + error);
    }
  }
  return conf;
}

}  // namespace

uint64_t client_errors() { return g_client_errors.load(std::memory_order_relaxed); }

void Producer::validate(const ProducerSettings& settings) { rd_kafka_conf_destroy(build_conf(settings)); }

Producer::Producer(const ProducerSettings& settings, std::chrono::milliseconds stall_limit, ClusterView::Options view)
    : stall_watch_(stall_limit), view_(*this, view) {
  if (const auto it = settings.find("partitioner"); it != settings.end()) partitioner_ = it->second.value;
  if (const auto it = settings.find("acks"); it != settings.end()) acks_zero_ = it->second.value == "0";
  rd_kafka_conf_t* conf = build_conf(settings);
  rd_kafka_conf_set_dr_msg_cb(conf, &on_delivery_report);
  rd_kafka_conf_set_error_cb(conf, &on_error);
  rd_kafka_conf_set_log_cb(conf, &on_log);
  rd_kafka_conf_set_stats_cb(conf, &on_statistics);
  rd_kafka_conf_set_opaque(conf, this);
  char error[512];
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (!rk_) {
    rd_kafka_conf_destroy(conf);
    throw config::ConfigError(std::string("cannot create a Kafka producer: ") + error);
  }
  view_.start();
}

Producer::~Producer() {
  view_.stop();  // its questions go through this handle
  // Blocking, so that every purged message's report is queued before the poll serves it.
  rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  poll(0);  // trackers learn that their messages were purged
  for (auto& [name, topic] : topics_) rd_kafka_topic_destroy(topic.rkt);
  rd_kafka_destroy(rk_);
  flush_report_tally();  // before the counts go with topics_
}

int64_t Producer::TopicCounters::outstanding() const {
  const PartitionCounters* p = partitions.load(std::memory_order_acquire);
  int64_t held = 0;
  for (int32_t i = 0; i < capacity.load(std::memory_order_acquire); ++i)
    held += static_cast<int64_t>(p[i].produced.load(std::memory_order_relaxed) - p[i].reported());
  return held;
}

rd_kafka_topic_t* Producer::topic_handle(const std::string& topic) {
  std::lock_guard lock(topics_mutex_);
  auto [it, inserted] = topics_.try_emplace(topic);
  if (users_.count(topic)) it->second.let_go_when_unused = true;
  if (inserted) {
    std::unique_ptr<TopicCounters>& counters = counters_[topic];
    if (!counters) counters = std::make_unique<TopicCounters>();
    it->second.counters = counters.get();
    // The producer's topic settings (acks, message.timeout.ms, ... are topic settings in librdkafka),
    // with this topic's counters as its opaque.
    rd_kafka_topic_conf_t* conf = rd_kafka_default_topic_conf_dup(rk_);
    rd_kafka_topic_conf_set_opaque(conf, it->second.counters);
    it->second.rkt = rd_kafka_topic_new(rk_, topic.c_str(), conf);  // takes conf (destroys it on failure)
  }
  rd_kafka_topic_t* handle = it->second.rkt;
  if (!handle) topics_.erase(it);  // refused (e.g. a name too long): asked again next time
  return handle;
}

// Sized by the topic's partition count the first time something is produced to it; partitions
// added to the topic later are not counted (the stall watch does not see them).
Producer::TopicCounters* Producer::counters_for(const std::string& topic, int32_t partition_count) {
  std::lock_guard lock(topics_mutex_);
  const auto it = topics_.find(topic);
  if (it == topics_.end()) return nullptr;
  TopicCounters& c = *it->second.counters;
  if (!c.owned && partition_count > 0) {
    c.owned = std::make_unique<PartitionCounters[]>(static_cast<size_t>(partition_count));
    c.partitions.store(c.owned.get(), std::memory_order_release);
    c.capacity.store(partition_count, std::memory_order_release);
  }
  return &c;
}

TopicView Producer::topic_view(const std::string& topic) { return view_.topic(topic); }

void Producer::use_topic(const std::string& topic, bool make_handle) {
  {
    std::lock_guard lock(topics_mutex_);
    ++users_[topic];
    if (const auto it = topics_.find(topic); it != topics_.end()) it->second.let_go_when_unused = true;
  }
  if (make_handle) topic_handle(topic);
  view_.topic(topic);
}

void Producer::release_topic(const std::string& topic) {
  bool unused = false;
  {
    std::lock_guard lock(topics_mutex_);
    if (const auto it = users_.find(topic); it != users_.end() && --it->second <= 0) {
      users_.erase(it);
      unused = !topics_.count(topic);  // with a handle: forgotten when the handle goes
    }
  }
  if (unused) view_.forget(topic);
  let_go_of_unused_topics();
}

// A topic no sink uses any more, of which librdkafka holds nothing (no report can come for it):
// its handle and counters go, and the view stops asking about it.
void Producer::let_go_of_unused_topics() {
  std::vector<std::string> gone;
  {
    std::lock_guard lock(topics_mutex_);
    for (auto it = topics_.begin(); it != topics_.end();) {
      if (it->second.let_go_when_unused && !users_.count(it->first) && it->second.counters->outstanding() == 0) {
        rd_kafka_topic_destroy(it->second.rkt);
        gone.push_back(it->first);
        it = topics_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const std::string& topic : gone) view_.forget(topic);
}

size_t Producer::topics_held() const {
  std::lock_guard lock(topics_mutex_);
  return topics_.size();
}

int32_t Producer::partition_for_key(std::string_view key, int32_t partition_count) const {
  using Partitioner = int32_t (*)(const rd_kafka_topic_t*, const void*, size_t, int32_t, void*, void*);
  // librdkafka's partitioners by their setting's name: those that hash every key (an empty one too),
  // and the *_random ones that hash a key and pick at random without one.
  static const std::map<std::string, std::pair<Partitioner, bool>, std::less<>> kPartitioners{
      {"consistent", {&rd_kafka_msg_partitioner_consistent, false}},
      {"consistent_random", {&rd_kafka_msg_partitioner_consistent, true}},
      {"murmur2", {&rd_kafka_msg_partitioner_murmur2, false}},
      {"murmur2_random", {&rd_kafka_msg_partitioner_murmur2, true}},
      {"fnv1a", {&rd_kafka_msg_partitioner_fnv1a, false}},
      {"fnv1a_random", {&rd_kafka_msg_partitioner_fnv1a, true}},
  };
  if (partition_count <= 0) return -1;
  const auto it = kPartitioners.find(partitioner_.empty() ? std::string_view("consistent_random") : partitioner_);
  if (it == kPartitioners.end()) return -1;  // random: no key decides
  const auto [hash, random_without_key] = it->second;
  if (key.empty() && random_without_key) return -1;
  // The hashing partitioners read only the key and the count (not the topic, nor its availability).
  return hash(nullptr, key.data(), key.size(), partition_count, nullptr, nullptr);
}

ClusterMetadata Producer::metadata(const std::vector<std::string>& topics, std::chrono::milliseconds timeout) {
  ClusterMetadata out;
  const rd_kafka_metadata_t* md = nullptr;
  // Every topic of the cluster: a request for all of them is the one that creates none (asking for
  // named ones would have Kafka create those it lacks, and the view asks before a topic named by
  // an event may be used).
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 1, nullptr, &md, static_cast<int>(timeout.count()));
  if (err) {
    out.error = rd_kafka_err2str(err);
    return out;
  }
  out.answered = true;
  for (int i = 0; i < md->broker_cnt; ++i) out.brokers.push_back(md->brokers[i].id);
  std::unordered_map<std::string_view, bool> listed;  // wanted topic → the cluster listed it
  for (const std::string& topic : topics) listed.emplace(topic, false);
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& t = md->topics[i];
    const auto wanted = listed.find(t.topic);
    if (wanted == listed.end()) continue;
    wanted->second = true;
    TopicMetadata& topic = out.topics.emplace_back();
    topic.topic = t.topic;
    topic.error = t.err;
    for (int j = 0; j < t.partition_cnt; ++j) {
      const int32_t id = t.partitions[j].id;
      if (id < 0 || id >= t.partition_cnt) continue;
      topic.leaders.resize(static_cast<size_t>(t.partition_cnt), -1);
      topic.leaders[static_cast<size_t>(id)] = t.partitions[j].leader;
    }
  }
  rd_kafka_metadata_destroy(md);
  // What the cluster does not list, it does not have.
  for (const auto& [topic, was_listed] : listed)
    if (!was_listed)
      out.topics.push_back({.topic = std::string(topic), .error = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART});
  return out;
}

ClusterQuery::LeaderAnswer Producer::ask_leader(const std::string& topic, int32_t partition,
                                                std::chrono::milliseconds timeout) {
  int64_t low = 0, high = 0;
  const rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(rk_, topic.c_str(), partition, &low, &high, static_cast<int>(timeout.count()));
  if (!err) return {};
  const bool silent = err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT ||
                      err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
  return {rd_kafka_err2str(err), silent};
}

size_t Producer::produce(const std::string& topic, int32_t partition, std::span<OutgoingMessage> messages,
                         const StopDeadline& until, ProduceOptions options) {
  rd_kafka_topic_t* rkt = topic_handle(topic);
  if (!rkt) {  // a name librdkafka refuses outright (e.g. too long)
    for (OutgoingMessage& m : messages) m.refusal = RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION;
    return messages.size();
  }
  const bool per_message = partition == kPerMessage;
  // Counted before they are produced (a report may come at once, on another thread), and what
  // librdkafka refused taken off again after: the count is never below what it holds.
  TopicCounters* counters = options.partition_count > 0 ? counters_for(topic, options.partition_count) : nullptr;
  const int32_t counted = counters ? counters->capacity.load(std::memory_order_acquire) : 0;
  // Adds each message (with `refused_only`, takes each refused one off) to its partition's count.
  const auto count = [&](bool refused_only) {
    if (!counted) return;
    PartitionCounters* c = counters->partitions.load(std::memory_order_acquire);
    for (size_t i = 0; i < messages.size();) {  // a run of one partition's messages: one add
      const int32_t p = per_message ? messages[i].partition : partition;
      size_t end = per_message ? i + 1 : messages.size();
      while (end < messages.size() && messages[end].partition == p) ++end;
      const auto first = messages.begin() + static_cast<ptrdiff_t>(i),
                 last = messages.begin() + static_cast<ptrdiff_t>(end);
      const auto n = static_cast<uint64_t>(
          refused_only ? std::count_if(first, last, [](const OutgoingMessage& m) { return m.refusal != 0; }) : end - i);
      if (n && p >= 0 && p < counted) {
        if (refused_only)
          c[p].produced.fetch_sub(n, std::memory_order_relaxed);
        else
          c[p].produced.fetch_add(n, std::memory_order_relaxed);
      }
      i = end;
    }
  };
  count(false);
  const size_t refused = produce_counted(rkt, partition, messages, until, options);
  if (refused) count(true);
  return refused;
}

size_t Producer::produce_counted(rd_kafka_topic_t* rkt, int32_t partition, std::span<OutgoingMessage> messages,
                                 const StopDeadline& until, ProduceOptions options) {
  const bool per_message = partition == kPerMessage;
  const int flags = (per_message ? RD_KAFKA_MSG_F_PARTITION : 0) | (options.copy_payloads ? RD_KAFKA_MSG_F_COPY : 0);
  if (options.with_headers) return produce_each(rkt, per_message ? kPerMessage : partition, messages, until, flags);
  // librdkafka's array, and for each of its entries the index of its OutgoingMessage.
  thread_local std::vector<rd_kafka_message_t> batch;
  thread_local std::vector<uint32_t> origin;
  batch.resize(messages.size());
  origin.resize(messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    rd_kafka_message_t& m = batch[i];
    m = rd_kafka_message_t{};
    m.payload = const_cast<char*>(messages[i].payload);
    m.len = messages[i].length;
    m.key = const_cast<char*>(messages[i].key);
    m.key_len = messages[i].key_length;
    m._private = messages[i].tracker;
    m.partition = messages[i].partition < 0 ? RD_KAFKA_PARTITION_UA : messages[i].partition;
    messages[i].refusal = 0;
    origin[i] = static_cast<uint32_t>(i);
  }
  const int32_t target = partition < 0 ? RD_KAFKA_PARTITION_UA : partition;
  size_t refused = 0;
  while (!batch.empty()) {
    const int accepted = rd_kafka_produce_batch(rkt, target, flags, batch.data(), static_cast<int>(batch.size()));
    if (static_cast<size_t>(accepted) == batch.size()) break;
    // Refused messages keep their order: compact the queue-full ones to retry, hand the rest
    // back to the caller.
    size_t retry = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      rd_kafka_message_t& m = batch[i];
      if (!m.err) continue;
      if (m.err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        m.err = RD_KAFKA_RESP_ERR_NO_ERROR;
        origin[retry] = origin[i];
        batch[retry++] = m;
      } else {
        messages[origin[i]].refusal = m.err;
        ++refused;
      }
    }
    batch.resize(retry);
    if (batch.empty()) break;
    if (until.passed() || stalled()) {  // a stalled partition may never make room
      for (size_t i = 0; i < batch.size(); ++i) messages[origin[i]].refusal = RD_KAFKA_RESP_ERR__QUEUE_FULL;
      refused += batch.size();
      break;
    }
    poll(10);  // librdkafka's queue is full: serve reports, let it drain
  }
  return refused;
}

// One rd_kafka_producev per message, headers attached (librdkafka owns them once it takes the
// message). A full queue is waited out as in the batch path; order is kept because a message is
// only produced once the one before it was taken.
size_t Producer::produce_each(rd_kafka_topic_t* rkt, int32_t partition, std::span<OutgoingMessage> messages,
                              const StopDeadline& until, int flags) {
  size_t refused = 0;
  for (OutgoingMessage& message : messages) {
    message.refusal = 0;
    const int32_t target = partition == kPerMessage
                               ? (message.partition < 0 ? RD_KAFKA_PARTITION_UA : message.partition)
                               : (partition < 0 ? RD_KAFKA_PARTITION_UA : partition);
    while (true) {
      rd_kafka_headers_t* headers = rd_kafka_headers_new(message.headers.size());
      for (const MessageHeader& h : message.headers)
        rd_kafka_header_add(headers, h.name.data(), static_cast<ssize_t>(h.name.size()), h.value.data(),
                            static_cast<ssize_t>(h.value.size()));
      const rd_kafka_resp_err_t err = rd_kafka_producev(
          rk_, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(target), RD_KAFKA_V_MSGFLAGS(flags & RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_VALUE(const_cast<char*>(message.payload), message.length),
          RD_KAFKA_V_KEY(message.key, message.key_length), RD_KAFKA_V_OPAQUE(message.tracker),
          RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      rd_kafka_headers_destroy(headers);  // not taken: still ours
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || until.passed() || stalled()) {
        message.refusal = err;
        ++refused;
        break;
      }
      poll(10);  // librdkafka's queue is full: serve reports, let it drain
    }
  }
  return refused;
}

void Producer::poll(int timeout_ms) {
  set_write_tick();
  rd_kafka_poll(rk_, timeout_ms);
  flush_report_tally();
}

int Producer::flush(int timeout_ms) {
  set_write_tick();
  rd_kafka_flush(rk_, timeout_ms);
  flush_report_tally();
  return rd_kafka_outq_len(rk_);
}

void Producer::purge(bool in_flight) {
  rd_kafka_purge(rk_,
                 RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_NON_BLOCKING | (in_flight ? RD_KAFKA_PURGE_F_INFLIGHT : 0));
}

bool Producer::fatal(std::string* reason) const {
  char text[512] = "";
  const rd_kafka_resp_err_t err = rd_kafka_fatal_error(rk_, text, sizeof text);
  if (err && reason) *reason = text;
  return err != RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool Producer::needs_replacing(std::string* reason) const {
  if (fatal(reason)) {
    if (reason) *reason = "had a fatal error (" + *reason + ")";
    return true;
  }
  if (!stalled()) return false;
  if (reason) {
    std::lock_guard lock(stats_mutex_);
    *reason = "left a partition stalled (" + stall_reason_ + ")";
  }
  return true;
}

// What waits for a stalled partition never leaves without the purge; what waits for the others
// is given time to be sent first, so that little of it is sent again.
void Producer::release_stalled(std::chrono::milliseconds flush_for) {
  if (!stalled()) return;
  if (!flushing_.exchange(true)) {
    flush(static_cast<int>(flush_for.count()));
    flushed_.store(true);
  }
  if (flushed_.load()) purge(false);  // not while a sharing sink still flushes
}

int Producer::queue_length() const { return rd_kafka_outq_len(rk_); }

std::vector<BrokerStats> Producer::broker_stats() const {
  std::lock_guard lock(stats_mutex_);
  return broker_stats_;
}

void Producer::add_watcher(std::weak_ptr<ConnectionWatcher> watcher) {
  std::lock_guard lock(watchers_mutex_);
  watchers_.push_back(std::move(watcher));
}

void Producer::remove_watcher(const ConnectionWatcher* watcher) {
  std::lock_guard lock(watchers_mutex_);
  std::erase_if(watchers_, [&](const std::weak_ptr<ConnectionWatcher>& w) {
    const auto held = w.lock();
    return !held || held.get() == watcher;
  });
}

// librdkafka's reason starts with the broker's name, "host:port/id: ..." ("/bootstrap" for a
// connection made before the cluster named its brokers: no produce goes there).
// librdkafka calls the error callback for a connection that could not be made (the broker is
// down); one that was up and closed (a leader that moved, a broker that restarted) it only logs,
// at most once in 30 s alike: what the statistics count (broker_disconnected) tells those apart.
void Producer::connection_lost(const char* reason) {
  const std::string_view text(reason);
  const size_t colon = text.find(": ");
  const size_t slash = text.rfind('/', colon);
  if (colon == std::string_view::npos || slash == std::string_view::npos) return;
  int32_t broker = -1;
  const char* first = text.data() + slash + 1;
  const char* last = text.data() + colon;
  if (std::from_chars(first, last, broker).ptr != last || broker < 0) return;
  {
    std::lock_guard lock(stats_mutex_);
    ++told_by_error_[broker];
  }
  broker_disconnected(broker);
}

void Producer::broker_disconnected(int32_t broker) {
  set_write_tick();
  std::vector<std::shared_ptr<ConnectionWatcher>> watchers;
  {
    std::lock_guard lock(watchers_mutex_);
    for (const auto& w : watchers_)
      if (auto held = w.lock()) watchers.push_back(std::move(held));
  }
  for (const auto& w : watchers) w->connection_lost(broker, write_tick());
}

// How recent the cluster view's last answer must be for the stall watch to go by it: its steady
// interval (10 s) and a question's timeout (2 s), and some.
constexpr auto kViewFreshness = std::chrono::seconds(15);

void Producer::observe(ProducerStatistics stats) {
  // Each partition something was produced to, as the producer counts it, librdkafka sends it and
  // the cluster serves it.
  std::map<std::pair<std::string, int32_t>, int32_t> client_leaders;
  for (const PartitionStats& p : stats.partitions) client_leaders[{p.topic, p.partition}] = p.leader;
  const auto now = Clock::now();
  ProgressReport report{.any_broker_up = stats.any_broker_up(),
                        .cluster_answered = now - view_.answered_at() < kViewFreshness};
  bool leader_lost = false;
  {
    std::lock_guard lock(topics_mutex_);
    for (const auto& [name, topic] : topics_) {
      const TopicCounters& c = *topic.counters;
      const int32_t counted = c.capacity.load(std::memory_order_acquire);
      if (!counted) continue;
      const TopicView view = view_.find(name).value_or(TopicView{});  // (a topic let go stays let go)
      const PartitionCounters* partitions = c.partitions.load(std::memory_order_acquire);
      for (int32_t p = 0; p < counted; ++p) {
        const uint64_t produced = partitions[p].produced.load(std::memory_order_relaxed);
        if (produced == 0) continue;  // never used
        const uint64_t reported = partitions[p].reported();
        const auto client = client_leaders.find({name, p});
        const int32_t client_leader = client == client_leaders.end() ? -1 : client->second;
        const int32_t cluster_leader = view.leader(p);
        // librdkafka lost the partition's leader: the view asks the cluster at once (the sink keeps
        // events of a partition without a leader aside; librdkafka's may be wrong, issue 5430).
        leader_lost |= client_leader < 0 && produced > reported;
        report.partitions.push_back({.topic = name,
                                     .partition = p,
                                     .outstanding = produced > reported ? produced - reported : 0,
                                     .delivered = partitions[p].delivered.load(std::memory_order_relaxed),
                                     .client_leader = client_leader,
                                     .cluster_leader = cluster_leader,
                                     .served = view.served(p),
                                     .leader_down = stats.broker_down(cluster_leader)});
      }
    }
  }
  if (leader_lost) view_.wake();
  let_go_of_unused_topics();  // those released while something of them was still in librdkafka
  std::lock_guard lock(stats_mutex_);
  if (!stalled()) {
    if (auto verdict = stall_watch_.observe(now, report)) {
      spdlog::error(
          "kafka producer: partition {}; a new producer takes over (librdkafka can keep a partition "
          "from its leader after an outage)",
          *verdict);
      stall_reason_ = std::move(*verdict);
      stalled_.store(true, std::memory_order_relaxed);
    }
  }
  // acks=0: a connection that was up and went down since the last report (librdkafka counts each)
  // may have taken along what was written to it. Those the error callback told of since the last
  // report were counted then (RecentWrites::take cleared what was written before): only more
  // disconnects than that are counted now, which takes what was written since.
  if (acks_zero_)
    for (const BrokerStats& b : stats.brokers) {
      uint64_t& seen = disconnects_seen_[b.id];
      const auto told = told_by_error_.find(b.id);
      if (b.disconnects > seen + (told == told_by_error_.end() ? 0 : told->second)) broker_disconnected(b.id);
      seen = b.disconnects;
    }
  told_by_error_.clear();
  broker_stats_ = std::move(stats.brokers);
}

}  // namespace sluice::kafka
