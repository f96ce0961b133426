#pragma once
// The one place that talks to librdkafka's producer API. A Producer wraps one rd_kafka_t
// handle; several sinks may share it (all methods are thread-safe, as librdkafka's are).
//
// Messages are produced without copying: their payload must stay valid until the message's
// DeliveryTracker has been told the outcome. Outcomes arrive from poll()/flush(), on whichever
// thread calls them. Destroying a Producer purges what it still holds and tells the trackers.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include "agent/config/config_error.h"
#include "agent/deadline.h"

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

// Why a message was not delivered: a fixed set, so it can label a counter.
enum class DeliveryError : uint8_t {
  none = 0,
  timed_out,          // message.timeout.ms passed (e.g. broker down that long)
  purged,             // dropped from librdkafka's queue at the shutdown deadline
  queue_full,         // never enqueued: the shutdown deadline passed while the queue was full
  unknown_topic,
  invalid_topic,      // a name Kafka refuses (e.g. '/' or ':' in it)
  unknown_partition,  // the topic has no such partition
  not_authorized,
  too_large,          // larger than the broker accepts
  invalid_message,    // the broker refuses it as corrupt or invalid
  producer_fatal,     // the idempotent producer lost its state (a fatal error): it is recreated
  other,
};
inline constexpr int kDeliveryErrorKinds = 12;
std::string_view to_string(DeliveryError error);
// Errors librdkafka reported about the cluster (unreachable brokers, authentication, ...), all producers.
uint64_t client_errors();

struct DeliveryReport {
  DeliveryError error = DeliveryError::none;
  int code = 0;             // librdkafka's rd_kafka_resp_err_t
  const char* text = "";    // librdkafka's description
  // Failed, but the broker may have stored it: it had been sent (a request that timed out, a
  // retry purged at shutdown). Sending it again may duplicate it.
  bool possibly_persisted = false;
};
// A report for librdkafka error `code` (0: delivered).
DeliveryReport report_of(int code, bool possibly_persisted = false);

// What to do with an undelivered message, decided here and nowhere else:
//   retry:   back to the channel, sent again after a backoff (the outage may end);
//   discard: retrying cannot help; dropped and counted under its reason;
//   recreate: the producer is dead (fatal error); back to the channel, and a new producer.
// A topic or partition that does not exist (or a topic name Kafka refuses) condemns only the
// event when that part of its destination came from the event (topicHeader, partitionIdHeader);
// the sink's own topic or partition being unknown is a misconfiguration to retry and log
// loudly, not a reason to discard everything the sink sends.
enum class ErrorClass : uint8_t { retry, discard, recreate };
struct Destination {
  bool topic_from_event = false;
  bool partition_from_event = false;
};
ErrorClass classify(DeliveryError error, Destination destination);

// Told the outcome of each message it was attached to, on whichever thread polled.
class DeliveryTracker {
 public:
  virtual ~DeliveryTracker() = default;
  virtual void on_delivery(const DeliveryReport& report) = 0;
};

struct OutgoingMessage {
  const char* payload;
  size_t length;
  const char* key = nullptr;
  size_t key_length = 0;
  DeliveryTracker* tracker = nullptr;
  int32_t partition = -1;  // used when produce() is asked for per-message partitions
  // Set by produce(): librdkafka's error for a message it did not take (its tracker is not
  // told: the caller decides); 0 once taken (its tracker will hear the outcome).
  int refusal = 0;
};

// From librdkafka's statistics (statistics.interval.ms), per broker.
struct BrokerStats {
  std::string name;
  bool up = false;
  double rtt_avg_seconds = 0;
  double rtt_p99_seconds = 0;
};

class Producer {
 public:
  // Checks every setting with librdkafka without creating a handle (no network). Throws
  // ConfigError "<file:line>: <key>: <librdkafka's message>".
  static void validate(const ProducerSettings& settings);

  // Creates the handle: librdkafka starts connecting to bootstrap.servers now.
  explicit Producer(const ProducerSettings& settings);
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Enqueues messages for topic/partition (partition < 0: librdkafka's partitioner;
  // kPerMessage: each message's own partition field, -1 there for the partitioner). When
  // librdkafka's queue is full it polls and retries until `until` passes (re-read on every
  // retry: stop() may set it meanwhile): that wait is the backpressure. Messages not taken get
  // `refusal` set and their trackers are not told. Returns how many were not taken.
  static constexpr int32_t kPerMessage = -1000;
  // copy_payloads: librdkafka copies them (their memory is reused once produce returns).
  size_t produce(const std::string& topic, int32_t partition, std::span<OutgoingMessage> messages,
                 const StopDeadline& until, bool copy_payloads = false);

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
  int queue_length() const;
  // The latest statistics librdkafka reported (empty before the first report).
  std::vector<BrokerStats> broker_stats() const;
  void set_broker_stats(std::vector<BrokerStats> stats);

 private:
  rd_kafka_topic_s* topic_handle(const std::string& topic);

  rd_kafka_s* rk_ = nullptr;
  mutable std::mutex stats_mutex_;
  std::vector<BrokerStats> broker_stats_;
  std::mutex topics_mutex_;
  std::map<std::string, rd_kafka_topic_s*> topics_;
};

}  // namespace sluice::kafka
