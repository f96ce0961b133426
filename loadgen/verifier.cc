#include "loadgen/verifier.h"

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "loadgen/event_template.h"
#include "sinks/kafka/topic_reader.h"

namespace sluice::loadgen {

Verifier::Verifier(Expected expected) : expected_(std::move(expected)) {}

void Verifier::add(int32_t partition, int64_t timestamp_ms, std::string_view payload) {
  ++totals_.received;
  ++totals_.per_partition[partition];
  if (timestamp_ms >= 0) {
    if (totals_.first_timestamp_ms < 0 || timestamp_ms < totals_.first_timestamp_ms)
      totals_.first_timestamp_ms = timestamp_ms;
    if (timestamp_ms > totals_.last_timestamp_ms) totals_.last_timestamp_ms = timestamp_ms;
  }
  const auto id = parse_event_id(payload);
  if (!id) {
    ++totals_.unrecognised;
    return;
  }
  Seen& s = seen_[id->connection];
  const size_t word = id->sequence / 64;
  if (word >= s.bits.size()) s.bits.resize(std::max(word + 1, s.bits.size() * 2), 0);
  const uint64_t bit = uint64_t{1} << (id->sequence % 64);
  if (s.bits[word] & bit) {
    ++s.duplicates;
  } else {
    s.bits[word] |= bit;
    ++s.unique;
  }
  s.max_plus_one = std::max(s.max_plus_one, id->sequence + 1);
  auto [last, inserted] = s.last_by_partition.emplace(partition, id->sequence);
  if (!inserted) {
    if (id->sequence < last->second)
      ++s.reordered;
    else
      last->second = id->sequence;
  }
}

Verdict Verifier::finish() const {
  Verdict v = totals_;
  Expected expected = expected_;
  for (const auto& [id, s] : seen_)
    expected.emplace(id, SentByConnection{s.max_plus_one, {}});  // up to the highest seen
  for (const auto& [id, sent] : expected) {
    const uint64_t want = sent.sent;
    auto declared_lost = [&](uint64_t seq) {
      for (auto [from, to] : sent.lost_ranges)
        if (seq >= from && seq <= to) return true;
      return false;
    };
    ConnectionVerdict c;
    c.expected = want;
    // Listed by no summary given (without one, each connection counts up to its highest sequence).
    c.unknown = !expected_.empty() && !expected_.count(id);
    auto it = seen_.find(id);
    if (it != seen_.end()) {
      const Seen& s = it->second;
      c.duplicates = s.duplicates;
      c.reordered = s.reordered;
      c.unique = s.unique;
      uint64_t present_below = 0;  // below want: present, or declared lost
      uint64_t run_start = UINT64_MAX;
      auto has = [&](uint64_t seq) { return seq / 64 < s.bits.size() && (s.bits[seq / 64] >> (seq % 64)) & 1; };
      for (uint64_t seq = 0; seq <= want; ++seq) {
        const bool present = seq < want && has(seq);
        if (seq < want && !present && !sent.lost_ranges.empty() && declared_lost(seq)) {
          ++c.possibly_lost;
          ++present_below;  // accounted for: the sender said this write failed
          continue;
        }
        if (seq < want && present) ++present_below;
        if (seq < want && !present && run_start == UINT64_MAX) run_start = seq;
        if ((present || seq == want) && run_start != UINT64_MAX) {
          if (c.missing_ranges.size() < 5) c.missing_ranges.emplace_back(run_start, seq - 1);
          run_start = UINT64_MAX;
        }
      }
      c.missing = want - present_below;
      // What arrived at or past want: every distinct sequence number not present below it (the
      // declared lost ones counted in present_below are not present at all).
      c.beyond = s.unique - (present_below - c.possibly_lost);
    } else {
      for (auto [from, to] : sent.lost_ranges) c.possibly_lost += to - from + 1;
      c.missing = want - c.possibly_lost;
      if (c.missing) c.missing_ranges.emplace_back(0, want - 1);
    }
    v.unique += c.unique;
    v.duplicates += c.duplicates;
    v.reordered += c.reordered;
    v.missing += c.missing;
    v.possibly_lost += c.possibly_lost;
    v.beyond += c.beyond;
    if (c.unknown) v.unknown += c.unique;
    v.connections[id] = c;
  }
  return v;
}

std::string Verdict::report() const {
  std::ostringstream out;
  out << "partitions:";
  for (const auto& [p, n] : per_partition) out << " " << p << "=" << n;
  out << "\n";
  for (const auto& [id, c] : connections) {
    if (c.missing == 0 && c.duplicates == 0 && c.beyond == 0 && !c.unknown) continue;
    out << "connection " << id << ": expected " << c.expected << ", unique " << c.unique << ", duplicates "
        << c.duplicates << ", missing " << c.missing << ", beyond " << c.beyond;
    for (auto [from, to] : c.missing_ranges) out << " [" << from << "-" << to << "]";
    if (c.unknown) out << " (not in the sender's summary)";
    out << "\n";
  }
  out << "received " << received << " from " << connections.size() << " connection(s) in " << per_partition.size()
      << " partition(s): unique " << unique << ", duplicates " << duplicates << ", missing " << missing
      << ", reordered " << reordered << ", unrecognised " << unrecognised << "\n";
  if (beyond || unknown)
    out << "never sent, by the sender's summary: " << beyond << " beyond the count it reported for their connection, "
        << unknown << " on connection(s) it does not list\n";
  if (possibly_lost)
    out << "possibly lost " << possibly_lost
        << ": missing, but in writes the sender saw fail or the receiver never acknowledged (not counted as "
           "missing)\n";
  if (datagrams)
    out << "datagrams missing " << missing << ": accounted for " << missing_accounted() << " (the agent counted "
        << counted_drops << " dropped, the input backlog dropped " << backlog_drops << " before any socket), "
        << "not accounted for " << missing_unaccounted() << "\n";
  if (last_timestamp_ms > first_timestamp_ms && first_timestamp_ms >= 0) {
    const double seconds = (last_timestamp_ms - first_timestamp_ms) / 1000.0;
    out << "landed over " << seconds
        << " s (Kafka timestamps, first to last): " << static_cast<uint64_t>(received / seconds) << " events/s\n";
  }
  if (!read_complete) out << "the read timed out before every partition reached its end\n";
  if (datagrams)
    out << (ok() ? "VERIFIED: every datagram stored once or counted as dropped\n"
                 : "FAILED: datagrams missing without a counted drop, duplicated, unrecognised or never sent\n");
  else
    out << (ok() ? "VERIFIED: every event exactly once\n"
                 : "FAILED: events missing, duplicated, unrecognised or never sent\n");
  return out.str();
}

SenderSummary read_sender_summary(const std::string& json_path) {
  std::ifstream in(json_path);
  if (!in) throw std::runtime_error("cannot read " + json_path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string json = text.str();
  // The summary is ours (SendResult::to_json): one object per connection, id before sent,
  // then its "lost" ranges.
  static const std::regex entry(R"re("id":(\d+),"sent":(\d+)[^\n]*"lost":\[([^\n]*)\]\})re");
  static const std::regex range(R"re(\[(\d+),(\d+)\])re");
  static const std::regex udp(R"re("udp":true,"gso":(true|false),"backlog_drops":(\d+))re");
  SenderSummary summary;
  if (std::smatch m; std::regex_search(json, m, udp)) {
    summary.udp = true;
    summary.backlog_drops = std::stoull(m[2]) * (m[1] == "true" ? 64 : 1);
  }
  Expected& expected = summary.connections;
  for (auto it = std::sregex_iterator(json.begin(), json.end(), entry); it != std::sregex_iterator(); ++it) {
    SentByConnection& c = expected[static_cast<uint32_t>(std::stoul((*it)[1]))];
    c.sent = std::stoull((*it)[2]);
    const std::string ranges = (*it)[3];
    for (auto r = std::sregex_iterator(ranges.begin(), ranges.end(), range); r != std::sregex_iterator(); ++r)
      c.lost_ranges.emplace_back(std::stoull((*r)[1]), std::stoull((*r)[2]));
  }
  if (expected.empty()) throw std::runtime_error(json_path + " has no connections: is it a sluice-loadgen summary?");
  return summary;
}

SenderSummary read_sender_summaries(const std::vector<std::string>& json_paths) {
  SenderSummary all;
  for (const std::string& path : json_paths) {
    const SenderSummary one = read_sender_summary(path);
    for (const auto& [id, sent] : one.connections)
      if (!all.connections.emplace(id, sent).second)
        throw std::invalid_argument(path + ": connection " + std::to_string(id) +
                                    " is in an earlier summary too: give each send its own --first-connection");
    all.udp = all.udp || one.udp;
    all.backlog_drops += one.backlog_drops;
  }
  return all;
}

Verdict verify_topic(const std::string& bootstrap, const std::string& topic, const SenderSummary& sent,
                     const VerifyOptions& options) {
  Verifier verifier(sent.connections);
  kafka::TopicReader reader(bootstrap, topic);
  const bool complete =
      reader.read_all([&](int32_t partition, int64_t, int64_t timestamp_ms,
                          std::string_view payload) { verifier.add(partition, timestamp_ms, payload); },
                      kafka::ReadOptions{options.idle, options.timeout, options.from_offset, options.from_time_ms});
  Verdict v = verifier.finish();
  v.read_complete = complete;
  v.datagrams = sent.udp;
  v.backlog_drops = sent.backlog_drops;
  v.counted_drops = options.counted_drops;
  return v;
}

}  // namespace sluice::loadgen
