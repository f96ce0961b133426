#pragma once
// Proves what landed in Kafka: reads every partition of a topic, finds each event's
// connection id and sequence number, and counts per connection what arrived once, twice, out
// of order, or not at all. Memory: one bit per sequence number (a bitmap per connection).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::loadgen {

// What a sender says it sent on one connection (from its --summary-json).
struct SentByConnection {
  uint64_t sent = 0;                                       // sequence numbers issued, 0..sent-1
  std::vector<std::pair<uint64_t, uint64_t>> lost_ranges;  // written to a socket that then failed
};
using Expected = std::map<uint32_t, SentByConnection>;

// What the sender's --summary-json says: per connection, and for UDP what the machine dropped.
struct SenderSummary {
  Expected connections;
  bool udp = false;
  // UDP: datagrams the input backlog may have dropped before any socket while we sent, machine-
  // wide (other traffic's drops count too: an allowance, not a measurement): its packet drops,
  // times 64 if datagrams went 64 to a packet (UDP_SEGMENT; --no-gso makes it exact).
  uint64_t backlog_drops = 0;
};

struct ConnectionVerdict {
  uint64_t expected = 0;       // sent, from the sender's summary; else highest sequence seen + 1
  uint64_t possibly_lost = 0;  // missing, but the sender reported them in a failed write
  uint64_t unique = 0;
  uint64_t duplicates = 0;
  uint64_t reordered = 0;  // arrived after a higher sequence of the same connection and partition
  uint64_t missing = 0;
  uint64_t beyond = 0;                                        // sequence numbers the sender says it never sent
  bool unknown = false;                                       // a connection the sender's summary does not list
  std::vector<std::pair<uint64_t, uint64_t>> missing_ranges;  // first few, [from, to]
};

struct Verdict {
  std::map<uint32_t, ConnectionVerdict> connections;
  std::map<int32_t, uint64_t> per_partition;
  uint64_t received = 0;
  uint64_t unique = 0;
  uint64_t duplicates = 0;
  uint64_t missing = 0;
  uint64_t possibly_lost = 0;
  uint64_t reordered = 0;
  uint64_t unrecognised = 0;  // messages without a loadgen marker
  // Events no sender sent, by its summary: sequence numbers at or past a connection's count, and
  // events of connections it does not list (both 0 without a summary). One such event could
  // otherwise stand in for one that is missing.
  uint64_t beyond = 0;
  uint64_t unknown = 0;  // distinct events on connections the summary does not list
  int64_t first_timestamp_ms = -1;
  int64_t last_timestamp_ms = -1;
  bool read_complete = true;
  // UDP: a datagram may be dropped, but never silently. The missing ones are accounted for by the
  // drops the agent counted (its socket's kernel drops, what it did not read or put at shutdown)
  // and those the input backlog dropped before the agent's socket saw them.
  bool datagrams = false;
  uint64_t counted_drops = 0;  // the agent's
  uint64_t backlog_drops = 0;  // the machine's, from the sender's summary
  uint64_t missing_accounted() const { return std::min(missing, counted_drops + backlog_drops); }
  uint64_t missing_unaccounted() const { return missing - missing_accounted(); }

  bool ok() const {
    return (datagrams ? missing_unaccounted() : missing) == 0 && duplicates == 0 && unrecognised == 0 && beyond == 0 &&
           unknown == 0 && read_complete;
  }
  std::string report() const;
};

class Verifier {
 public:
  // From the sender's JSON summary; may be empty (then up to the highest sequence seen counts).
  explicit Verifier(Expected expected = {});

  void add(int32_t partition, int64_t timestamp_ms, std::string_view payload);
  Verdict finish() const;

 private:
  struct Seen {
    std::vector<uint64_t> bits;
    uint64_t unique = 0, duplicates = 0, reordered = 0, max_plus_one = 0;
    std::map<int32_t, uint64_t> last_by_partition;
  };
  Expected expected_;
  std::map<uint32_t, Seen> seen_;
  Verdict totals_;
};

// Reads a sender summary written by `sluice-loadgen --summary-json`.
SenderSummary read_sender_summary(const std::string& json_path);
// Several sends' summaries as one (their connections, their backlog drops added up); throws
// std::invalid_argument if two list the same connection id (--first-connection keeps them apart).
SenderSummary read_sender_summaries(const std::vector<std::string>& json_paths);

struct VerifyOptions {
  std::chrono::milliseconds idle{2000};
  std::chrono::milliseconds timeout{120000};
  int64_t from_offset = -1;    // start every partition here (-1: its beginning)
  int64_t from_time_ms = -1;   // or at the first message at or after this time (ms since epoch)
  uint64_t counted_drops = 0;  // UDP: the drops the agent counted (see Verdict::datagrams)
};

// Reads the topic and returns the verdict.
Verdict verify_topic(const std::string& bootstrap, const std::string& topic, const SenderSummary& sent,
                     const VerifyOptions& options);

}  // namespace sluice::loadgen
