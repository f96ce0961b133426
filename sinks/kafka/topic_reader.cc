#include "sinks/kafka/topic_reader.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace sluice::kafka {

using Clock = std::chrono::steady_clock;

TopicReader::TopicReader(const std::string& bootstrap, const std::string& topic) : topic_(topic) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::pair<const char*, const char*> settings[] = {{"bootstrap.servers", bootstrap.c_str()},
                                                          {"group.id", "sluice-verify"},
                                                          {"enable.auto.commit", "false"},
                                                          {"enable.partition.eof", "true"},
                                                          {"auto.offset.reset", "earliest"},
                                                          {"log_level", "3"},
                                                          {"fetch.wait.max.ms", "100"}};
  for (auto [name, value] : settings) {
    if (rd_kafka_conf_set(conf, name, value, error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(std::string("topic reader: ") + error);
    }
  }
  rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (!rk_) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("topic reader: ") + error);
  }
  rd_kafka_poll_set_consumer(rk_);
}

TopicReader::~TopicReader() {
  rd_kafka_consumer_close(rk_);
  rd_kafka_destroy(rk_);
}

std::vector<PartitionOffsets> TopicReader::offsets(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, topic_.c_str(), nullptr);
  std::vector<PartitionOffsets> result;
  while (true) {
    const rd_kafka_metadata_t* metadata = nullptr;
    const rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, rkt, &metadata, 2000);
    if (!err && metadata->topic_cnt == 1 && !metadata->topics[0].err && metadata->topics[0].partition_cnt > 0) {
      for (int i = 0; i < metadata->topics[0].partition_cnt; ++i)
        result.push_back({metadata->topics[0].partitions[i].id, 0, 0});
      rd_kafka_metadata_destroy(metadata);
      break;
    }
    if (metadata) rd_kafka_metadata_destroy(metadata);
    if (Clock::now() >= deadline) {
      rd_kafka_topic_destroy(rkt);
      throw std::runtime_error("topic " + topic_ + ": no metadata from Kafka (" + rd_kafka_err2str(err) + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  rd_kafka_topic_destroy(rkt);
  // A partition may be between leaders for a moment (a broker just restarted, a leader moving
  // back): asked again until the deadline, not given up at the first "leader not available".
  for (PartitionOffsets& p : result) {
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
          rk_, topic_.c_str(), p.partition, &p.low, &p.high, static_cast<int>(std::clamp<int64_t>(left, 100, 5000)));
      if (!err) break;
      if (Clock::now() >= deadline)
        throw std::runtime_error("topic " + topic_ + ": cannot read offsets of partition " +
                                 std::to_string(p.partition) + ": " + rd_kafka_err2str(err));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  return result;
}

bool TopicReader::read_all(const OnMessage& on_message, const ReadOptions& options) {
  const auto deadline = Clock::now() + options.timeout;
  const std::vector<PartitionOffsets> partitions = offsets(options.timeout);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
  for (const PartitionOffsets& p : partitions) {
    int64_t start = RD_KAFKA_OFFSET_BEGINNING;
    if (options.from_time_ms >= 0)
      start = options.from_time_ms;
    else if (options.from_offset >= 0)
      start = options.from_offset;
    rd_kafka_topic_partition_list_add(list, topic_.c_str(), p.partition)->offset = start;
  }
  if (options.from_time_ms >= 0) {
    // Kafka's time index finds the first offset at or after the time. Where it cannot (the
    // embedded mock cluster has no time index), start at the beginning: messages before the
    // time are skipped below either way.
    const rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk_, list, 10000);
    for (int i = 0; i < list->cnt; ++i)
      if (err || list->elems[i].err || list->elems[i].offset < 0) list->elems[i].offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(rk_, list);
  rd_kafka_topic_partition_list_destroy(list);

  std::vector<bool> at_end(partitions.size(), false);
  auto index_of = [&](int32_t partition) -> size_t {
    for (size_t i = 0; i < partitions.size(); ++i)
      if (partitions[i].partition == partition) return i;
    return 0;
  };
  auto last_message = Clock::now();
  bool complete = false;
  while (Clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, 100);
    if (!m) {
      const bool all_at_end = std::all_of(at_end.begin(), at_end.end(), [](bool b) { return b; });
      if (all_at_end && Clock::now() - last_message >= options.idle) {
        complete = true;
        break;
      }
      continue;
    }
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end[index_of(m->partition)] = true;
    } else if (!m->err) {
      at_end[index_of(m->partition)] = false;
      last_message = Clock::now();
      const int64_t timestamp = rd_kafka_message_timestamp(m, nullptr);
      if (options.from_time_ms >= 0 && timestamp >= 0 && timestamp < options.from_time_ms) {
        rd_kafka_message_destroy(m);
        continue;
      }
      headers_.clear();
      key_.assign(m->key ? static_cast<const char*>(m->key) : "", m->key ? m->key_len : 0);
      rd_kafka_headers_t* headers = nullptr;
      if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name = nullptr;
        const void* value = nullptr;
        size_t length = 0;
        for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &length) == RD_KAFKA_RESP_ERR_NO_ERROR;
             ++i)
          headers_.push_back(std::string(name) + "=" + std::string(static_cast<const char*>(value), length));
      }
      on_message(m->partition, m->offset, timestamp, std::string_view(static_cast<const char*>(m->payload), m->len));
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_assign(rk_, nullptr);
  return complete;
}

}  // namespace sluice::kafka
