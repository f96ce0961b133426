#include "sinks/kafka/statistics.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string_view>

namespace sluice::kafka {

bool ProducerStatistics::any_broker_up() const {
  return std::any_of(brokers.begin(), brokers.end(), [](const BrokerStats& b) { return b.up; });
}

bool ProducerStatistics::broker_down(int32_t id) const {
  return std::any_of(brokers.begin(), brokers.end(), [&](const BrokerStats& b) { return b.id == id && !b.up; });
}

int32_t ProducerStatistics::leader(const std::string& topic, int32_t partition) const {
  for (const PartitionStats& p : partitions)
    if (p.partition == partition && p.topic == topic) return p.leader;
  return -1;
}

namespace {

// One pass over librdkafka's report, reading only the fields above and stepping over the rest
// (most of it: per-partition queues, latency windows, each broker's partitions). Each producer
// sends one every statistics.interval.ms, on the sink's thread; a general JSON (or YAML) reader
// built the whole tree and cost more than a percent of the agent's time at 2M events/s.
class ReportReader {
 public:
  explicit ReportReader(const char* json) : at_(json), end_(json + std::strlen(json)) {}

  bool read(ProducerStatistics& stats) {
    bool ok = object([&](std::string_view key) {
      if (key == "brokers") return object([&](std::string_view) { return broker(stats); });
      if (key == "topics") return object([&](std::string_view name) { return topic(std::string(name), stats); });
      return skip_value();
    });
    space();
    return ok && at_ == end_;
  }

 private:
  bool broker(ProducerStatistics& stats) {
    BrokerStats b;
    std::string state;
    const bool ok = object([&](std::string_view key) {
      if (key == "nodeid") return integer(b.id);
      if (key == "name") return string(b.name);
      if (key == "state") return string(state);
      if (key == "disconnects") return integer(b.disconnects);
      if (key == "rtt") {
        return object([&](std::string_view window) {
          if (window == "avg") return seconds_of_microseconds(b.rtt_avg_seconds);
          if (window == "p99") return seconds_of_microseconds(b.rtt_p99_seconds);
          return skip_value();
        });
      }
      return skip_value();
    });
    b.up = state == "UP";
    if (ok && b.id >= 0) stats.brokers.push_back(std::move(b));  // bootstrap pseudo-brokers: -1
    return ok;
  }

  bool topic(const std::string& name, ProducerStatistics& stats) {
    return object([&](std::string_view key) {
      if (key != "partitions") return skip_value();
      return object([&](std::string_view) {
        PartitionStats p{.topic = name, .partition = -1, .leader = -1};
        const bool ok = object([&](std::string_view field) {
          if (field == "partition") return integer(p.partition);
          if (field == "leader") return integer(p.leader);
          return skip_value();
        });
        // The unassigned queue (-1): no partition known yet (e.g. a missing topic).
        if (ok && p.partition >= 0) stats.partitions.push_back(std::move(p));
        return ok;
      });
    });
  }

  // {"key": value, ...}: on_member reads each value (its key given, unescaped).
  template <typename OnMember>
  bool object(OnMember&& on_member) {
    if (!literal('{')) return false;
    if (literal('}')) return true;
    std::string key;
    do {
      if (!string(key) || !literal(':') || !on_member(std::string_view(key))) return false;
    } while (literal(','));
    return literal('}');
  }

  bool skip_value() {
    if (++depth_ > kMaxDepth) return false;
    space();
    bool ok = false;
    if (at_ == end_) {
      ok = false;
    } else if (*at_ == '{') {
      ok = object([&](std::string_view) { return skip_value(); });
    } else if (*at_ == '[') {
      ++at_;
      ok = literal(']');
      if (!ok) {
        do ok = skip_value();
        while (ok && literal(','));
        ok = ok && literal(']');
      }
    } else if (*at_ == '"') {
      std::string ignored;
      ok = string(ignored);
    } else {
      double ignored;
      ok = number(ignored) || word("true") || word("false") || word("null");
    }
    --depth_;
    return ok;
  }

  bool string(std::string& out) {
    if (!literal('"')) return false;
    out.clear();
    while (at_ < end_) {
      const char* stop = static_cast<const char*>(std::memchr(at_, '"', static_cast<size_t>(end_ - at_)));
      if (!stop) return false;
      const char* escape = static_cast<const char*>(std::memchr(at_, '\\', static_cast<size_t>(stop - at_)));
      if (!escape) {
        out.append(at_, stop);
        at_ = stop + 1;
        return true;
      }
      out.append(at_, escape);
      at_ = escape + 1;
      if (at_ == end_) return false;
      switch (const char c = *at_++) {
        case '"':
        case '\\':
        case '/': out += c; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {  // kept as '?': no field read here needs more than ASCII
          if (end_ - at_ < 4) return false;
          at_ += 4;
          out += '?';
          break;
        }
        default: return false;
      }
    }
    return false;
  }

  bool number(double& out) {
    space();
    const auto [next, error] = std::from_chars(at_, end_, out);
    if (error != std::errc{}) return false;
    at_ = next;
    return true;
  }

  template <typename Integer>
  bool integer(Integer& out) {
    double value;
    if (!number(value)) return false;
    out = static_cast<Integer>(value);
    return true;
  }

  bool seconds_of_microseconds(double& out) {
    if (!number(out)) return false;
    out /= 1e6;
    return true;
  }

  bool word(std::string_view w) {
    if (static_cast<size_t>(end_ - at_) < w.size() || std::string_view(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }

  // Consumes `c` (after white space) if it is next.
  bool literal(char c) {
    space();
    if (at_ == end_ || *at_ != c) return false;
    ++at_;
    return true;
  }

  void space() {
    while (at_ < end_ && (*at_ == ' ' || *at_ == '\n' || *at_ == '\r' || *at_ == '\t')) ++at_;
  }

  static constexpr int kMaxDepth = 64;  // librdkafka nests 5 deep; anything deeper is not its report
  const char* at_;
  const char* end_;
  int depth_ = 0;
};

}  // namespace

std::optional<ProducerStatistics> parse_statistics(const char* json) {
  ProducerStatistics stats;
  if (!ReportReader(json).read(stats)) return std::nullopt;
  return stats;
}

}  // namespace sluice::kafka
