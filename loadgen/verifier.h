#pragma once
// Proves what landed in Kafka: reads every partition of a topic, finds each event's
// connection id and sequence number, and counts per connection what arrived once, twice, out
// of order, or not at all. Memory: one bit per sequence number (a bitmap per connection).

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::loadgen {

struct ConnectionVerdict {
  uint64_t expected = 0;   // sent, from the sender's summary; else highest sequence seen + 1
  uint64_t unique = 0;
  uint64_t duplicates = 0;
  uint64_t reordered = 0;  // arrived after a higher sequence of the same connection and partition
  uint64_t missing = 0;
  uint64_t beyond = 0;     // sequence numbers the sender says it never sent
  std::vector<std::pair<uint64_t, uint64_t>> missing_ranges;  // first few, [from, to]
};

struct Verdict {
  std::map<uint32_t, ConnectionVerdict> connections;
  std::map<int32_t, uint64_t> per_partition;
  uint64_t received = 0;
  uint64_t unique = 0;
  uint64_t duplicates = 0;
  uint64_t missing = 0;
  uint64_t reordered = 0;
  uint64_t unrecognised = 0;  // messages without a loadgen marker
  int64_t first_timestamp_ms = -1;
  int64_t last_timestamp_ms = -1;
  bool read_complete = true;

  bool ok() const { return missing == 0 && duplicates == 0 && unrecognised == 0 && read_complete; }
  std::string report() const;
};

class Verifier {
 public:
  // expected_sent: connection id → events sent (from the sender's JSON summary); may be empty.
  explicit Verifier(std::map<uint32_t, uint64_t> expected_sent = {});

  void add(int32_t partition, int64_t timestamp_ms, std::string_view payload);
  Verdict finish() const;

 private:
  struct Seen {
    std::vector<uint64_t> bits;
    uint64_t unique = 0, duplicates = 0, reordered = 0, max_plus_one = 0;
    std::map<int32_t, uint64_t> last_by_partition;
  };
  std::map<uint32_t, uint64_t> expected_;
  std::map<uint32_t, Seen> seen_;
  Verdict totals_;
};

// Reads a sender summary written by `sluice-loadgen --summary-json`.
std::map<uint32_t, uint64_t> read_expected_from_summary(const std::string& json_path);

// Reads the topic and returns the verdict.
Verdict verify_topic(const std::string& bootstrap, const std::string& topic,
                     const std::map<uint32_t, uint64_t>& expected, std::chrono::milliseconds idle,
                     std::chrono::milliseconds timeout);

}  // namespace sluice::loadgen
