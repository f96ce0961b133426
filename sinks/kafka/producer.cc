#include "sinks/kafka/producer.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "agent/api/log_limiter.h"

namespace sluice::kafka {
namespace {

void on_delivery_report(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  auto* tracker = static_cast<DeliveryTracker*>(message->_private);
  if (!tracker) return;
  const bool possibly_persisted =
      message->err && rd_kafka_message_status(message) == RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED;
  tracker->on_delivery(report_of(message->err, possibly_persisted));
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

void on_error(rd_kafka_t* rk, int err, const char* reason, void*) {
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  g_client_errors.fetch_add(1, std::memory_order_relaxed);
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

Producer::Producer(const ProducerSettings& settings, std::chrono::milliseconds stall_limit)
    : stall_watch_(stall_limit) {
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
}

Producer::~Producer() {
  // Blocking, so that every purged message's report is queued before the poll serves it.
  rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  poll(0);  // trackers learn that their messages were purged
  for (auto& [name, rkt] : topics_) rd_kafka_topic_destroy(rkt);
  rd_kafka_destroy(rk_);
}

rd_kafka_topic_t* Producer::topic_handle(const std::string& topic) {
  std::lock_guard lock(topics_mutex_);
  auto [it, inserted] = topics_.emplace(topic, nullptr);
  if (inserted) it->second = rd_kafka_topic_new(rk_, topic.c_str(), nullptr);
  rd_kafka_topic_t* handle = it->second;
  if (!handle) topics_.erase(it);  // refused (e.g. a name too long): asked again next time
  return handle;
}

size_t Producer::produce(const std::string& topic, int32_t partition, std::span<OutgoingMessage> messages,
                         const StopDeadline& until, ProduceOptions options) {
  rd_kafka_topic_t* rkt = topic_handle(topic);
  if (!rkt) {  // a name librdkafka refuses outright (e.g. too long)
    for (OutgoingMessage& m : messages) m.refusal = RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION;
    return messages.size();
  }
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
    rd_kafka_poll(rk_, 10);  // librdkafka's queue is full: serve reports, let it drain
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
      rd_kafka_poll(rk_, 10);  // librdkafka's queue is full: serve reports, let it drain
    }
  }
  return refused;
}

void Producer::poll(int timeout_ms) { rd_kafka_poll(rk_, timeout_ms); }

int Producer::flush(int timeout_ms) {
  rd_kafka_flush(rk_, timeout_ms);
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

void Producer::observe(ProducerStatistics stats) {
  std::lock_guard lock(stats_mutex_);
  if (!stalled()) {
    if (auto verdict = stall_watch_.observe(Clock::now(), stats)) {
      spdlog::error(
          "kafka producer: partition {}; a new producer takes over (librdkafka can keep a partition "
          "from its leader after an outage)",
          *verdict);
      stall_reason_ = std::move(*verdict);
      stalled_.store(true, std::memory_order_relaxed);
    }
  }
  broker_stats_ = std::move(stats.brokers);
}

}  // namespace sluice::kafka
