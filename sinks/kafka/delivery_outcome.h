#pragma once
// What became of a message, and what the sink does about it: librdkafka's error codes folded
// into a fixed set of reasons (a counter's label), and the one place that decides between
// retrying, discarding and a new producer.

#include <cstdint>
#include <string_view>

namespace sluice::kafka {

// Why a message was not delivered: a fixed set, so it can label a counter.
enum class DeliveryError : uint8_t {
  none = 0,
  timed_out,   // message.timeout.ms passed (e.g. broker down that long)
  purged,      // dropped from librdkafka's queue: at the shutdown deadline, or from a stalled producer
  queue_full,  // never enqueued: the shutdown deadline passed, or the producer stalled, while the queue was full
  unknown_topic,
  invalid_topic,      // a name Kafka refuses (e.g. '/' or ':' in it)
  unknown_partition,  // the topic has no such partition
  not_authorized,
  too_large,        // larger than the broker accepts
  invalid_message,  // the broker refuses it as corrupt or invalid
  producer_fatal,   // the idempotent producer lost its state (a fatal error): it is recreated
  other,
};
inline constexpr int kDeliveryErrorKinds = 12;
std::string_view to_string(DeliveryError error);
struct DeliveryReport {
  DeliveryError error = DeliveryError::none;
  int code = 0;           // librdkafka's rd_kafka_resp_err_t
  const char* text = "";  // librdkafka's description
  // Failed, but the broker may have stored it: it had been sent (a request that timed out, a
  // retry purged at shutdown). Sending it again may duplicate it.
  bool possibly_persisted = false;
  int32_t broker = -1;  // the broker it was sent to, if librdkafka says (acks=0: written to it)
  int64_t tick = 0;     // when (write_tick(), recent_writes.h)
};
// librdkafka's codes for what the sink decides itself, before asking librdkafka, and for what a
// topic's metadata says of it (checked against rdkafka.h where it is included).
inline constexpr int kErrUnknownTopicOrPart = 3;         // RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART
inline constexpr int kErrTopicException = 17;            // RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION: an invalid name
inline constexpr int kErrTopicAuthorizationFailed = 29;  // RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED
// UNKNOWN_TOPIC_ID (KIP-516): a topic deleted (and perhaps made again) under a producer that
// addresses it by id. By number: Debian 12's librdkafka 2.0.2 (SLUICE_SYSTEM_RDKAFKA) has no name for it.
inline constexpr int kErrUnknownTopicId = 100;
inline constexpr int kErrUnknownPartition = -190;  // RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION

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
// deadLetterTopic: what the dead-letter topic itself refuses for good (the record, or the topic:
// missing, not allowed); such a dead letter is discarded and counted, never retried there.
bool dead_letter_refused(DeliveryError error);

}  // namespace sluice::kafka
