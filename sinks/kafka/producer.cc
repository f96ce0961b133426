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
  // Delivered (nearly every report): nothing to look up.
  DeliveryReport report =
      message->err ? report_of(message->err, rd_kafka_message_status(message) == RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED)
                   : DeliveryReport{};
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

// The view's own client (Producer::new_question_handle): its connection cut by a late answer is
// expected under a busy broker and costs nothing but the answer, so a warning, under keys of its
// own (its lines must not hold back the producer's, which tell of connections that took events).
void on_question_log(const rd_kafka_t*, int level, const char* facility, const char* text) {
  if (level > 4) {
    spdlog::debug("librdkafka (cluster view's client) {}: {}", facility, text);
    return;
  }
  if (const auto note = limiter_for(std::string("view:") + facility).next())
    spdlog::warn("librdkafka (cluster view's client, not the producer's) {}: {}{}", facility, text, *note);
}

int on_statistics(rd_kafka_t*, char* json, size_t length, void* opaque) {
  flush_report_tally();  // the stall watch reads the delivered counts (a flush polls for long)
  if (auto stats = parse_statistics(json)) {
    static_cast<Producer*>(opaque)->observe(std::move(*stats));
  } else if (auto note = limiter_for("statistics unread").next()) {
    // Not seen so far; but a watch gone blind must say so.
    spdlog::warn(
        "kafka producer: a statistics report of librdkafka could not be read: the stall watch and the "
        "broker metrics skip it ({} bytes){}",
        length, *note);
  }
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

std::chrono::milliseconds reconnect_grace(const ProducerSettings& settings) {
  const auto milliseconds = [&](const char* name, int64_t otherwise) {
    const auto it = settings.find(name);
    if (it == settings.end()) return otherwise;
    const std::string& value = it->second.value;
    int64_t parsed = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    return error == std::errc{} && end == value.data() + value.size() && parsed >= 0 ? parsed : otherwise;
  };
  return std::chrono::milliseconds(milliseconds("reconnect.backoff.max.ms", 10'000) +
                                   milliseconds("socket.connection.setup.timeout.ms", 30'000));
}

void Producer::validate(const ProducerSettings& settings) { rd_kafka_conf_destroy(build_conf(settings)); }

Producer::Producer(const ProducerSettings& settings, std::chrono::milliseconds stall_limit, ClusterView::Options view)
    : stall_watch_(stall_limit, reconnect_grace(settings)), view_(*this, view) {
  if (const auto it = settings.find("partitioner"); it != settings.end()) partitioner_ = it->second.value;
  if (const auto it = settings.find("acks"); it != settings.end()) acks_zero_ = it->second.value == "0";
  ProducerSettings producing = settings;
  producing.try_emplace(
      "topic.metadata.refresh.interval.ms",
      ProducerSetting{"10000", {}, "topic.metadata.refresh.interval.ms (default: the view's interval)"});
  rd_kafka_conf_t* conf = build_conf(producing);
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
  std::string why_not;
  try {
    questions_ = new_question_handle(settings, why_not);
  } catch (...) {
    rd_kafka_destroy(rk_);
    throw;
  }
  if (!questions_) {
    rd_kafka_destroy(rk_);
    throw config::ConfigError("cannot create the Kafka client that asks the cluster for the producer: " + why_not);
  }
  view_.start();
}

// The view's questions (metadata, each partition's leader) ride a client of their own: asked on
// the producer's connection, a question queues behind every produce request written before it,
// and one that is not answered within its bound makes librdkafka cut that connection
// (socket.max.fails = 1), with what it held unread: with acks=0, events lost for a question. Its
// own connections have nothing queued ahead of a question, and a question that times out cuts
// only them. Same cluster, same security settings; nothing produced, no statistics, no
// idempotent producer id. The producer's handle no longer learns from the view's metadata
// answers: it refreshes its own every 10 s unless told otherwise (as often as the view asked).
rd_kafka_s* Producer::new_question_handle(const ProducerSettings& settings, std::string& why_not) {
  ProducerSettings asking = settings;
  for (const char* producing_only : {"enable.idempotence", "enable.gapless.guarantee", "transactional.id"})
    asking.erase(producing_only);
  asking["statistics.interval.ms"] = ProducerSetting{"0", {}, "statistics.interval.ms (the view's questions)"};
  const auto client_id = settings.find("client.id");
  asking["client.id"] =
      ProducerSetting{(client_id != settings.end() ? client_id->second.value : "sluice") + "-questions",
                      {},
                      "client.id (the view's questions)"};
  rd_kafka_conf_t* conf = build_conf(asking);
  rd_kafka_conf_set_log_cb(conf, &on_question_log);
  char error[512];
  rd_kafka_t* handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (!handle) {
    rd_kafka_conf_destroy(conf);
    why_not = error;
  }
  return handle;
}

Producer::~Producer() {
  view_.stop();  // its questions go through questions_ (destroyed last: poll() serves it too)
  // Blocking, so that every purged message's report is queued before the poll serves it.
  rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  poll(0);  // trackers learn that their messages were purged
  for (auto& [name, topic] : topics_) rd_kafka_topic_destroy(topic.rkt);
  rd_kafka_destroy(rk_);
  rd_kafka_destroy(questions_);
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
  rd_kafka_poll(questions_, 0);  // what it has to say (errors, logs), so that its queue does not grow
  const rd_kafka_resp_err_t err = rd_kafka_metadata(questions_, 1, nullptr, &md, static_cast<int>(timeout.count()));
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
  const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(questions_, topic.c_str(), partition, &low, &high,
                                                                   static_cast<int>(timeout.count()));
  if (!err) return {};
  const bool silent = err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT ||
                      err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
  return {rd_kafka_err2str(err), silent};
}

void Producer::poll(int timeout_ms) {
  set_write_tick();
  rd_kafka_poll(questions_, 0);  // its own events (errors, a SASL token to refresh): it has no thread of ours
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
  if (!stalled()) {
    if (!credentials_changed()) return false;
    if (reason) *reason = "its TLS files changed (sslReloadInterval)";
    return true;
  }
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

}  // namespace sluice::kafka
