#pragma once
// The one place that talks to librdkafka's producer API. A Producer wraps one rd_kafka_t
// handle; several sinks may share it (all methods are thread-safe, as librdkafka's are).
//
// Messages are produced without copying: their payload must stay valid until the message's
// DeliveryTracker has been told the outcome. Outcomes arrive from poll()/flush(), on whichever
// thread calls them.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include "agent/config/config_error.h"

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
  timed_out,                   // message.timeout.ms passed (e.g. broker down that long)
  purged,                      // dropped from librdkafka's queue at shutdown
  queue_full,                  // never enqueued: the shutdown deadline passed while the queue was full
  unknown_topic_or_partition,
  not_authorized,
  too_large,                   // permanent: larger than the broker accepts
  invalid_message,             // permanent: the broker refuses it as corrupt or invalid
  other,
};
inline constexpr int kDeliveryErrorKinds = 9;
std::string_view to_string(DeliveryError error);
// Errors librdkafka reported about the cluster (unreachable brokers, authentication, ...), all producers.
uint64_t client_errors();
// Retrying cannot help: discard, counted under the reason.
inline bool is_permanent(DeliveryError e) { return e == DeliveryError::too_large || e == DeliveryError::invalid_message; }

struct DeliveryReport {
  DeliveryError error = DeliveryError::none;
  int code = 0;             // librdkafka's rd_kafka_resp_err_t
  const char* text = "";    // librdkafka's description
};

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

  // Enqueues messages for topic/partition (partition < 0: librdkafka's partitioner). When
  // librdkafka's queue is full it polls and retries: that wait is the backpressure. Messages
  // refused for good (e.g. too large, unknown partition) are reported to their tracker as
  // failed at once. Returns false only if `give_up` became true while waiting.
  // partition = kPerMessage: each message's own partition field (-1 there: the partitioner).
  static constexpr int32_t kPerMessage = -1000;
  // copy_payloads: librdkafka copies them (their memory is reused once produce returns).
  bool produce(const std::string& topic, int32_t partition, std::span<const OutgoingMessage> messages,
               const bool& give_up, bool copy_payloads = false);

  // Serves delivery reports (and errors) for up to timeout_ms.
  void poll(int timeout_ms);
  // Waits up to timeout_ms for everything enqueued to be delivered; returns how many remain.
  int flush(int timeout_ms);
  // Drops what is still queued; its trackers are told (error) during the next poll().
  void purge();
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
