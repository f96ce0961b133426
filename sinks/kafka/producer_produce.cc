// Producer's produce paths: a run of messages to one partition (or each to its own) handed to
// librdkafka in one call, or one rd_kafka_producev per message where headers must go with it; a
// full queue waited out; the stall watch's per-partition counts kept. The rest of Producer is in
// producer.cc (its handle, topics, questions to the cluster) and producer_watch.cc (connections
// and the stall watch).
#include "sinks/kafka/producer.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

namespace sluice::kafka {

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

}  // namespace sluice::kafka
