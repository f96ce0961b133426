#pragma once
// The one place that talks to librdkafka's producer API. A Producer wraps one rd_kafka_t
// handle; several sinks may share it (all methods are thread-safe, as librdkafka's are).
//
// Messages are produced without copying: their payload must stay valid until the message's
// DeliveryTracker has been told the outcome. Outcomes arrive from poll()/flush(), on whichever
// thread calls them. Destroying a Producer purges what it still holds and tells the trackers.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agent/api/config_error.h"
#include "agent/api/deadline.h"
#include "sinks/kafka/cluster_view.h"
#include "sinks/kafka/delivery_outcome.h"
#include "sinks/kafka/stall_watch.h"
#include "sinks/kafka/statistics.h"

struct rd_kafka_s;
struct rd_kafka_topic_s;

namespace sluice::kafka {

// librdkafka properties with where each came from, so librdkafka's refusal can name the line.
struct ProducerSetting {
  std::string value;
  config::SourceLocation where;
  std::string written_as;  // the key as the user wrote it, e.g. tier2.sinks.kk1.kafka.send.buffer.bytes
};
using ProducerSettings = std::map<std::string, ProducerSetting>;

// Errors librdkafka reported about the cluster (unreachable brokers, authentication, ...), all producers.
uint64_t client_errors();

// How long librdkafka may take to reconnect by itself once a broker is back: its longest wait
// between attempts (reconnect.backoff.max.ms) and its longest attempt
// (socket.connection.setup.timeout.ms), as set or by librdkafka's defaults (10 s and 30 s).
std::chrono::milliseconds reconnect_grace(const ProducerSettings& settings);

// Told when librdkafka reports that a connection to a broker went down (acks=0: what was written to
// it last may be gone: recent_writes.h), on whichever thread polled.
class ConnectionWatcher {
 public:
  virtual ~ConnectionWatcher() = default;
  virtual void connection_lost(int32_t broker, int64_t tick) = 0;
};

// Told the outcome of each message it was attached to, on whichever thread polled.
class DeliveryTracker {
 public:
  virtual ~DeliveryTracker() = default;
  virtual void on_delivery(const DeliveryReport& report) = 0;
};

// A Kafka record header; both views must stay valid until produce() returns (librdkafka copies them).
struct MessageHeader {
  std::string_view name;
  std::string_view value;
};

struct OutgoingMessage {
  const char* payload;
  size_t length;
  const char* key = nullptr;
  size_t key_length = 0;
  DeliveryTracker* tracker = nullptr;
  int32_t partition = -1;  // used when produce() is asked for per-message partitions (-1 there: the partitioner)
  // Record headers (kafka.headers): a call with any message that has some produces each message
  // on its own with rd_kafka_producev, since librdkafka's batch call has no headers.
  std::span<const MessageHeader> headers;
  // Set by produce(): librdkafka's error for a message it did not take (its tracker is not
  // told: the caller decides); 0 once taken (its tracker will hear the outcome).
  int refusal = 0;
};

struct ProduceOptions {
  bool copy_payloads = false;  // librdkafka copies them (their memory is reused once produce returns)
  bool with_headers = false;   // the messages carry headers: produced one call each (rd_kafka_producev)
  // The topic's partitions (as the cluster view says): the producer counts what it holds of each of
  // them, for the stall watch (0: not counted).
  int32_t partition_count = 0;
};

class Producer final : private ClusterQuery {
 public:
  // Checks every setting with librdkafka without creating a handle (no network). Throws
  // ConfigError "<file:line>: <key>: <librdkafka's message>".
  static void validate(const ProducerSettings& settings);

  // Creates the handle: librdkafka starts connecting to bootstrap.servers now, and the cluster view
  // starts asking. A partition stalled for `stall_limit` (StallWatch; 0: never) makes the producer
  // stalled().
  explicit Producer(const ProducerSettings& settings, std::chrono::milliseconds stall_limit = {},
                    ClusterView::Options view = {});
  ~Producer() override;
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Enqueues messages for topic/partition (partition < 0: librdkafka's partitioner;
  // kPerMessage: each message's own partition field, -1 there for the partitioner). When
  // librdkafka's queue is full it polls and retries until `until` passes (re-read on every
  // retry: stop() may set it meanwhile): that wait is the backpressure. Messages not taken get
  // `refusal` set and their trackers are not told. Returns how many were not taken.
  static constexpr int32_t kPerMessage = -1000;
  size_t produce(const std::string& topic, int32_t partition, std::span<OutgoingMessage> messages,
                 const StopDeadline& until, ProduceOptions options = {});

  // What the cluster says of `topic` (cluster_view.h): whether it exists, its partitions, which of
  // them are served. The first call for a topic asks the cluster about it; the answer comes soon.
  TopicView topic_view(const std::string& topic);
  // A sink sends to `topic`; with `make_handle`, librdkafka gets its handle now (and asks for its
  // metadata, which has Kafka create it if allow.auto.create.topics and the cluster let it);
  // otherwise the first produce() to it makes it. release_topic(): a sink no longer sends to it; a
  // topic no sink uses is let go (its handle once nothing of it is left in librdkafka).
  void use_topic(const std::string& topic, bool make_handle);
  void release_topic(const std::string& topic);
  // Topic handles held, for the tests and the memory bound.
  size_t topics_held() const;
  // The partition the producer's partitioner (its `partitioner` setting; librdkafka's default,
  // consistent_random, if unset) gives `key` among `partition_count`, as librdkafka would; -1 where
  // that partitioner picks one at random (a random one, or an empty key with a *_random one): the
  // caller picks.
  int32_t partition_for_key(std::string_view key, int32_t partition_count) const;
  // Serves delivery reports (and errors) for up to timeout_ms.
  void poll(int timeout_ms);
  // Waits up to timeout_ms for everything enqueued to be delivered; returns how many remain.
  // While it waits, librdkafka sends what it holds at once, whatever linger.ms says (used at
  // stop; flushing whenever the window is full was measured: more CPU, no more events/s).
  int flush(int timeout_ms);
  // Drops what librdkafka has not sent yet (queued, or waiting to be retried: those report
  // possibly_persisted); with in_flight also the requests awaiting the broker's answer. Does not
  // wait for librdkafka's threads; the trackers are told (purged) during a later poll().
  void purge(bool in_flight);
  // A fatal error (idempotent producer): every later produce fails; make a new producer.
  bool fatal(std::string* reason = nullptr) const;
  // A partition librdkafka no longer delivers to while the cluster serves it (stall_watch.h): only a
  // new producer helps.
  bool stalled() const { return stalled_.load(std::memory_order_relaxed); }
  // sslReloadInterval: its TLS files changed on disk (librdkafka read them once, at its start):
  // it is replaced once its sinks' takes settle, unless the new files do not load (then it goes on).
  void renew_credentials(bool renew) { credentials_changed_.store(renew, std::memory_order_relaxed); }
  bool credentials_changed() const { return credentials_changed_.load(std::memory_order_relaxed); }
  // fatal() or stalled(): what it holds should be given back and a new producer made.
  bool needs_replacing(std::string* reason = nullptr) const;
  // Once stalled: sends what it can for up to flush_for (once per producer, whichever of its sinks
  // calls first), then drops what still waits (purge(false)) on every call, what its sinks
  // produced meanwhile too, so that their takes settle and go back to the channel (acks >= 1) and
  // they can replace it. produce() takes nothing more once it is stalled and its queue is full.
  void release_stalled(std::chrono::milliseconds flush_for);
  int queue_length() const;
  // The latest statistics librdkafka reported (empty before the first report).
  std::vector<BrokerStats> broker_stats() const;
  // A statistics report: broker state for the metrics, partitions for the stall watch.
  void observe(ProducerStatistics stats);
  // Watchers of lost connections (the acks=0 sinks using this producer), and what tells them.
  void add_watcher(std::weak_ptr<ConnectionWatcher> watcher);
  void remove_watcher(const ConnectionWatcher* watcher);
  void connection_lost(const char* reason);  // the error callback's: a connection failed
  void broker_disconnected(int32_t broker);  // tells the watchers
  bool acks_zero() const { return acks_zero_; }
  // Sinks using the producer that commit a take once librdkafka has it (acks=0 outside a sink
  // group): what they handed over is theirs no more, so the producer may not be purged for another.
  void handing_over(int sinks) { handing_over_.fetch_add(sinks, std::memory_order_relaxed); }
  bool handed_over_to() const { return handing_over_.load(std::memory_order_relaxed) > 0; }
  // The sinks are done with the cluster view (stopping): it winds down now, joined at destruction.
  void stop_asking() { view_.request_stop(); }
  // The sinks stop at `deadline`: the view's questions end by then (their bound shrinks to the time left).
  void finish_asking_by(Clock::time_point deadline) { view_.finish_by(deadline); }

  // What the producer holds of each partition of a topic: counted by produce() and the delivery
  // reports (on whichever thread polls), read by the stall watch. The handle's opaque points here.
  struct PartitionCounters {
    std::atomic<uint64_t> produced{0}, delivered{0}, failed{0};
    uint64_t reported() const {
      return delivered.load(std::memory_order_relaxed) + failed.load(std::memory_order_relaxed);
    }
  };
  struct TopicCounters {
    std::atomic<PartitionCounters*> partitions{nullptr};  // set once, by the first produce()
    std::atomic<int32_t> capacity{0};                     // partitions counted (the count then)
    std::unique_ptr<PartitionCounters[]> owned;
    int64_t outstanding() const;
  };

 private:
  struct TopicHandle {
    rd_kafka_topic_s* rkt = nullptr;
    TopicCounters* counters = nullptr;  // the handle's opaque (counters_)
    bool let_go_when_unused = false;    // a sink used it (use_topic): it goes when none does
  };
  rd_kafka_topic_s* topic_handle(const std::string& topic);
  TopicCounters* counters_for(const std::string& topic, int32_t partition_count);
  void let_go_of_unused_topics();
  size_t produce_counted(rd_kafka_topic_s* rkt, int32_t partition, std::span<OutgoingMessage> messages,
                         const StopDeadline& until, ProduceOptions options);
  size_t produce_each(rd_kafka_topic_s* rkt, int32_t partition, std::span<OutgoingMessage> messages,
                      const StopDeadline& until, int flags);
  // ClusterQuery, for the view's thread.
  ClusterMetadata metadata(const std::vector<std::string>& topics, std::chrono::milliseconds timeout) override;
  LeaderAnswer ask_leader(const std::string& topic, int32_t partition, std::chrono::milliseconds timeout) override;

  static rd_kafka_s* new_question_handle(const ProducerSettings& settings, std::string& why_not);

  rd_kafka_s* rk_ = nullptr;
  rd_kafka_s* questions_ = nullptr;   // the view's client: its own connections (new_question_handle)
  std::string partitioner_;           // its `partitioner` setting, or "" (librdkafka's default)
  bool acks_zero_ = false;            // acks=0: delivery reports say where each message was written
  std::atomic<int> handing_over_{0};  // handing_over()
  mutable std::mutex stats_mutex_;    // guards broker_stats_, stall_watch_, stall_reason_
  std::vector<BrokerStats> broker_stats_;
  std::map<int32_t, uint64_t> disconnects_seen_;  // per broker, as the last statistics said (acks=0)
  std::map<int32_t, uint64_t> told_by_error_;     // per broker: the error callback's since the last statistics
  StallWatch stall_watch_;
  std::string stall_reason_;
  std::atomic<bool> stalled_{false};
  std::atomic<bool> credentials_changed_{false};
  std::atomic<bool> flushing_{false}, flushed_{false};
  mutable std::mutex topics_mutex_;
  std::map<std::string, TopicHandle> topics_;
  std::map<std::string, int> users_;  // sinks that send to each topic (use_topic / release_topic)
  // Each topic's counters, kept for the producer's life: librdkafka may keep a topic after its
  // handle goes (what it still holds of it, its metadata) and hands that one out again, with the
  // opaque it had, to the next rd_kafka_topic_new of the name. (Only topics produced to have them:
  // topics the cluster has, that the sinks allow.)
  std::map<std::string, std::unique_ptr<TopicCounters>> counters_;
  std::mutex watchers_mutex_;
  std::vector<std::weak_ptr<ConnectionWatcher>> watchers_;
  ClusterView view_;  // last: its thread asks through questions_, and stops first
};

}  // namespace sluice::kafka
