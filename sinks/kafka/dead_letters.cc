// deadLetterTopic: records Kafka refuses for good (too large, invalid, a topic an event named that
// is no name or does not exist) go to the dead-letter topic instead of being discarded. A settled
// take's refused messages are built again from its events, sent there with headers saying why and
// where they were meant to go, and the take waits at the window's head for those reports before it
// settles: its events leave the channel only once the dead-letter topic has them. What the
// dead-letter topic refuses for good is discarded and counted (never sent there again); what it
// cannot take now goes back to the channel like any undelivered event.
#include "sinks/kafka/kafka_sink.h"

#include <string>
#include <vector>

#include "sinks/kafka/delivery_tracker.h"

namespace sluice::kafka {
namespace {

constexpr std::string_view kReasonHeader = "sluice.dead_letter.reason";
constexpr std::string_view kTopicHeader = "sluice.dead_letter.topic";
constexpr std::string_view kTruncatedHeader = "sluice.dead_letter.truncated";

}  // namespace

bool KafkaSink::send_dead_letters(AwaitedTake& awaited) {
  // Not for a take given up at the shutdown deadline (unanswered: it goes back to the channel whole).
  if (config_.dead_letter_topic.empty() || awaited.dead_letters_sent || !awaited.done() || stop_deadline_.passed())
    return false;
  const size_t n = awaited.take().events;
  std::vector<DeliveryError> reason(n, DeliveryError::none);
  size_t dead = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!awaited.answered(i) || awaited.error(i) == DeliveryError::none) continue;
    if (awaited.error(i) == DeliveryError::too_large && !awaited.condemned_as_too_large(i)) continue;
    const Destination destination{.topic_from_event = !awaited.topic_from_event.empty() && awaited.topic_from_event[i],
                                  .partition_from_event = !config_.partition_header.empty()};
    if (classify(awaited.error(i), destination) != ErrorClass::discard) continue;
    reason[i] = awaited.error(i);
    ++dead;
  }
  if (dead == 0) return false;
  awaited.dead_letters_sent = true;
  awaited.dead_letters_at = Clock::now();
  awaited.dead_letter_reason = std::move(reason);

  // The take's messages again (payload, key, kafka.headers, as first sent), only the dead ones kept.
  request_.begin(awaited.take());
  for (const EventBatch& batch : awaited.take().batches) request_.add(batch);
  request_.take_topic_headers_missing();  // counted the first time
  request_.take_partition_headers_unusable();
  awaited.dead_letter_encoded = request_.release_encoded();
  std::vector<OutgoingMessage> letters;
  std::vector<std::vector<MessageHeader>> headers;  // each letter's; librdkafka copies them in produce()
  std::vector<std::string> texts;                   // the header values they point at
  letters.reserve(dead);
  headers.reserve(dead);
  texts.reserve(2 * dead);
  const uint64_t max_bytes = config_.dead_letter_max_bytes.bytes;
  for (size_t i = 0; i < n; ++i) {
    if (awaited.dead_letter_reason[i] == DeliveryError::none) continue;
    OutgoingMessage m = request_.messages()[i];
    std::vector<MessageHeader>& h = headers.emplace_back(m.headers.begin(), m.headers.end());
    h.push_back({kReasonHeader, to_string(awaited.dead_letter_reason[i])});
    const std::string& meant_for = !awaited.topics.empty() && awaited.topics[i] ? *awaited.topics[i] : config_.topic;
    h.push_back({kTopicHeader, meant_for});
    if (max_bytes > 0 && m.length > max_bytes) {
      h.push_back({kTruncatedHeader, texts.emplace_back(std::to_string(m.length))});
      m.length = max_bytes;
    }
    m.headers = h;
    m.partition = -1;  // the dead-letter topic's partitioner
    m.refusal = 0;
    m.tracker = awaited.tracker(i);
    awaited.reopen(i);
    letters.push_back(m);
  }
  probe_->dead_letters_waiting(static_cast<int64_t>(letters.size()));  // until the take settles
  // One reference per letter before any report can come; then the second round of reports.
  awaited.add_references(static_cast<int64_t>(letters.size()));
  const ProduceOptions options{.copy_payloads = false,  // the take's events, or dead_letter_encoded
                               .with_headers = true,
                               .partition_count = destinations_.view(config_.dead_letter_topic).partition_count()};
  if (producer_->produce(config_.dead_letter_topic, -1, letters, stop_deadline_, options) > 0) {
    awaited.refused_locally.resize(n);
    for (size_t k = 0, i = 0; i < n; ++i) {
      if (awaited.dead_letter_reason[i] == DeliveryError::none) continue;
      const OutgoingMessage& m = letters[k++];
      awaited.refused_locally[i] = m.refusal != 0;
      if (m.refusal) m.tracker->on_delivery(report_of(m.refusal));
    }
  }
  return true;
}

// An aside part whose topic the cluster does not have or refuses, named by its events: it joins
// the window as a take whose every message was refused so, and goes to the dead-letter topic.
void KafkaSink::dead_letter_aside(AsideTake entry, int refusal, Clock::time_point now) {
  const size_t n = entry.take.events;
  AwaitedTake* awaited = AwaitedTake::create(std::move(entry.take));
  awaited->taken_at = now;
  awaited->topic_from_event.assign(n, true);
  awaited->topics.assign(n, entry.topic);
  awaited->partitions.assign(n, entry.partition);
  window_.push_back(awaited);
  const DeliveryReport report = report_of(refusal);
  for (size_t i = 0; i < n; ++i) awaited->tracker(i)->on_delivery(report);
}

}  // namespace sluice::kafka
