#pragma once
// Reads a topic back from Kafka, every partition from its first offset: the verifier and the
// end-to-end tests use it to prove what landed. Not on the agent's data path.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

struct rd_kafka_s;

namespace sluice::kafka {

struct PartitionOffsets {
  int32_t partition = 0;
  int64_t low = 0;   // first offset still stored (the embedded cluster trims old data)
  int64_t high = 0;  // next offset to be written: messages ever stored = high
};

struct ReadOptions {
  // Stop once every partition has been read to its end and nothing new came for this long.
  std::chrono::milliseconds idle{2000};
  // Stop regardless after this long.
  std::chrono::milliseconds timeout{120000};
  int64_t from_offset = -1;   // start every partition at this offset (-1: its first stored one)
  int64_t from_time_ms = -1;  // or at its first message at or after this time (ms since epoch)
};

class TopicReader {
 public:
  TopicReader(const std::string& bootstrap, const std::string& topic);
  ~TopicReader();
  TopicReader(const TopicReader&) = delete;
  TopicReader& operator=(const TopicReader&) = delete;

  // Partitions and their offsets; throws std::runtime_error when Kafka does not answer in time.
  std::vector<PartitionOffsets> offsets(std::chrono::milliseconds timeout);

  // timestamp_ms: the message's Kafka timestamp (CreateTime set by the producer), -1 if none.
  using OnMessage =
      std::function<void(int32_t partition, int64_t offset, int64_t timestamp_ms, std::string_view payload)>;
  // Returns false when the timeout ended the read before every partition reached its end.
  bool read_all(const OnMessage& on_message, const ReadOptions& options);
  // Inside on_message: the record headers of the message handed over, "name=value" each, in order.
  const std::vector<std::string>& headers() const { return headers_; }
  // Inside on_message: the message's key (empty if it has none).
  const std::string& key() const { return key_; }

 private:
  rd_kafka_s* rk_ = nullptr;
  std::string topic_;
  std::vector<std::string> headers_;
  std::string key_;
};

}  // namespace sluice::kafka
