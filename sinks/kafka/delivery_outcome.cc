#include "sinks/kafka/delivery_outcome.h"

#include <librdkafka/rdkafka.h>

namespace sluice::kafka {
namespace {

static_assert(kErrUnknownTopicOrPart == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
static_assert(kErrTopicException == RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION);
static_assert(kErrTopicAuthorizationFailed == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
static_assert(kErrUnknownPartition == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION);

DeliveryError kind_of(rd_kafka_resp_err_t err) {
  if (err == kErrUnknownTopicId) return DeliveryError::unknown_topic;
  switch (err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR: return DeliveryError::none;
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT: return DeliveryError::timed_out;
    case RD_KAFKA_RESP_ERR__PURGE_QUEUE:
    case RD_KAFKA_RESP_ERR__PURGE_INFLIGHT: return DeliveryError::purged;
    case RD_KAFKA_RESP_ERR__QUEUE_FULL: return DeliveryError::queue_full;
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART: return DeliveryError::unknown_topic;
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION: return DeliveryError::unknown_partition;
    case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION: return DeliveryError::invalid_topic;
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR__AUTHENTICATION: return DeliveryError::not_authorized;
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE: return DeliveryError::too_large;
    case RD_KAFKA_RESP_ERR_INVALID_MSG:
    // KIP-467: the broker refused records of the batch (its per-record errors), the rest stored.
    case RD_KAFKA_RESP_ERR_INVALID_RECORD: return DeliveryError::invalid_message;
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__GAPLESS_GUARANTEE:
    case RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
    case RD_KAFKA_RESP_ERR_UNKNOWN_PRODUCER_ID: return DeliveryError::producer_fatal;
    default: return DeliveryError::other;
  }
}

}  // namespace

DeliveryReport report_of(int code, bool possibly_persisted) {
  const auto err = static_cast<rd_kafka_resp_err_t>(code);
  return {kind_of(err), code, err ? rd_kafka_err2str(err) : "", possibly_persisted};
}

ErrorClass classify(DeliveryError error, Destination destination) {
  switch (error) {
    case DeliveryError::too_large:
    case DeliveryError::invalid_message: return ErrorClass::discard;
    case DeliveryError::unknown_topic:
    case DeliveryError::invalid_topic: return destination.topic_from_event ? ErrorClass::discard : ErrorClass::retry;
    case DeliveryError::unknown_partition:
      return destination.topic_from_event || destination.partition_from_event ? ErrorClass::discard : ErrorClass::retry;
    case DeliveryError::producer_fatal: return ErrorClass::recreate;
    default: return ErrorClass::retry;  // outages, timeouts, authorization (may be granted), purges
  }
}

bool dead_letter_refused(DeliveryError error) {
  switch (error) {
    case DeliveryError::too_large:
    case DeliveryError::invalid_message:
    case DeliveryError::unknown_topic:
    case DeliveryError::invalid_topic:
    case DeliveryError::unknown_partition:
    case DeliveryError::not_authorized: return true;
    default: return false;
  }
}

std::string_view to_string(DeliveryError error) {
  switch (error) {
    case DeliveryError::none: return "none";
    case DeliveryError::timed_out: return "timed_out";
    case DeliveryError::purged: return "purged";
    case DeliveryError::queue_full: return "queue_full";
    case DeliveryError::unknown_topic: return "unknown_topic";
    case DeliveryError::invalid_topic: return "invalid_topic";
    case DeliveryError::unknown_partition: return "unknown_partition";
    case DeliveryError::not_authorized: return "not_authorized";
    case DeliveryError::too_large: return "too_large";
    case DeliveryError::invalid_message: return "invalid_message";
    case DeliveryError::producer_fatal: return "producer_fatal";
    case DeliveryError::other: return "other";
  }
  return "other";
}

}  // namespace sluice::kafka
