#include "top/top_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "agent/api/metric_names.h"

namespace sluice::top {
namespace {

double sum_of(const Scrape& s, const std::string& name, const std::string& key, const std::string& value) {
  double total = 0;
  for (const Sample& sample : s.samples)
    if (sample.name == name && (key.empty() || sample.label(key) == value)) total += sample.value;
  return total;
}

double max_of(const Scrape& s, const std::string& name, const std::string& key, const std::string& value, double none) {
  double best = none;
  for (const Sample& sample : s.samples)
    if (sample.name == name && sample.label(key) == value) best = std::max(best, sample.value);
  return best;
}

bool has(const Scrape& s, const std::string& name, const std::string& key, const std::string& value) {
  return std::any_of(s.samples.begin(), s.samples.end(),
                     [&](const Sample& sample) { return sample.name == name && sample.label(key) == value; });
}

// A counter's increase per second; after a restart of the agent (it went down) its new value.
double rate_of(const Scrape& before, const Scrape& now, double seconds, const std::string& name, const std::string& key,
               const std::string& value) {
  if (seconds <= 0) return 0;
  const double was = sum_of(before, name, key, value), is = sum_of(now, name, key, value);
  return (is >= was ? is - was : is) / seconds;
}

// The names a family's samples carry in label `key`, in order of appearance.
std::vector<std::string> names_in(const Scrape& s, const std::string& family, const std::string& key) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const Sample& sample : s.samples)
    if (sample.name == family && seen.insert(sample.label(key)).second) names.push_back(sample.label(key));
  return names;
}

// The counters `sluice top` lists under failures, and what each one counts.
struct FailureFamily {
  const char* name;
  const char* what;
};
constexpr FailureFamily kFailureFamilies[] = {
    {metric_names::kSinkDeliveryErrorsTotal.name, "delivery failed"},
    {metric_names::kSinkEventsDiscardedTotal.name, "discarded"},
    {metric_names::kSinkEventsLostTotal.name, "lost after hand-over"},
    {metric_names::kSinkEventsPossiblyLostTotal.name, "possibly lost (acks=0)"},
    {metric_names::kSinkEventsPossiblyDuplicatedTotal.name, "possibly duplicated"},
    {metric_names::kSinkProducerRestartsTotal.name, "producer restarted"},
    {metric_names::kKafkaClientErrorsTotal.name, "Kafka client errors"},
    {metric_names::kSourceConnectionsRefusedTotal.name, "connections refused"},
    {metric_names::kSourceTlsHandshakeFailuresTotal.name, "TLS handshakes failed"},
    {metric_names::kSourceAcceptErrorsTotal.name, "accept errors"},
    {metric_names::kSourceReadErrorsTotal.name, "read errors"},
    {metric_names::kSourceProtocolErrorsTotal.name, "protocol errors"},
    {metric_names::kSourceFramesTruncatedTotal.name, "frames truncated"},
    {metric_names::kSourceFramesInvalidTotal.name, "frames invalid"},
    {metric_names::kSourceUdpKernelDropsTotal.name, "UDP dropped by the kernel"},
    {metric_names::kSourceDatagramsDeniedTotal.name, "datagrams denied"},
    {metric_names::kSourceEventsDroppedAtShutdownTotal.name, "dropped at shutdown"},
    {metric_names::kSourceEventsFilteredTotal.name, "filtered by interceptors"},
    {metric_names::kSourceOptionalCopiesDroppedTotal.name, "optional copies dropped"},
    {metric_names::kSourceEventsUnroutedTotal.name, "routed to no channel"},
    {metric_names::kSinkTopicHeaderMissingTotal.name, "topic %{header} missing"},
    {metric_names::kSinkPartitionHeaderUnusableTotal.name, "partition header unusable"},
    {metric_names::kChannelDiskWriteErrorsTotal.name, "disk write errors"},
    {metric_names::kChannelEventsUnreadableTotal.name, "unreadable on disk"},
    {metric_names::kChannelCorruptTailsTotal.name, "corrupt segment tails"},
};

std::string component_of(const Sample& s) {
  for (const char* kind : {"sink", "source", "channel"})
    if (const std::string& name = s.label(kind); !name.empty()) return std::string(kind) + " " + name;
  return "agent";
}

std::vector<FailureRow> failures_of(const Scrape& before, const Scrape& now, double seconds) {
  std::vector<FailureRow> rows;
  const auto add = [&](const Sample& s, const std::string& what) {
    // Its reason, result, or the channel a source's count is about (an optional channel's copies).
    std::string reason = s.label("reason").empty() ? s.label("result") : s.label("reason");
    if (reason.empty() && !s.label("source").empty() && !s.label("channel").empty())
      reason = "channel " + s.label("channel");
    FailureRow row{what, component_of(s), reason, s.value, 0};
    if (seconds > 0) {
      double was = 0;
      for (const Sample& b : before.samples)
        if (b.name == s.name && b.labels == s.labels) was = b.value;
      row.per_s = (s.value >= was ? s.value - was : s.value) / seconds;
    }
    rows.push_back(std::move(row));
  };
  for (const FailureFamily& family : kFailureFamilies)
    for (const Sample& s : now.samples)
      if (s.name == family.name && s.value > 0) add(s, family.what);
  for (const Sample& s : now.samples)  // reloads that did not apply
    if (s.name == metric_names::kConfigReloadsTotal.name && s.value > 0 &&
        (s.label("result") == "refused" || s.label("result") == "failed"))
      add(s, "reloads");
  return rows;
}

// 3,312,004; with decimals below 10 (0.52).
std::string format_number(double v) {
  if (v < 0 || !std::isfinite(v)) return "-";
  if (v < 10 && v != std::floor(v)) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f", v);
    return buffer;
  }
  std::string digits = std::to_string(static_cast<unsigned long long>(std::llround(v)));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

std::string fixed(double v, int decimals) {
  if (v < 0) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
  return buffer;
}

// A table row: the first column left-aligned in `first` characters (cut if longer), the others
// right-aligned in `each`.
std::string row(const std::string& name, const std::vector<std::string>& cells, size_t first = 18, size_t each = 12) {
  std::string line = name.size() > first ? name.substr(0, first - 1) + "~" : name;
  line.resize(first, ' ');
  for (const std::string& cell : cells) {
    const std::string c = cell.size() >= each ? cell.substr(0, each - 1) : cell;
    line += std::string(each - c.size(), ' ') + c;
  }
  return line;
}

}  // namespace

double histogram_quantile_between(const Scrape& before, const Scrape& now, const std::string& family,
                                  const std::string& key, const std::string& value, double q) {
  const std::string bucket = family + "_bucket";
  std::map<double, double> gained;  // upper bound → cumulative count gained (+Inf as infinity)
  const auto bound_of = [](const Sample& s) {
    const std::string& le = s.label("le");
    return le == "+Inf" ? HUGE_VAL : std::strtod(le.c_str(), nullptr);
  };
  for (const Sample& s : now.samples)
    if (s.name == bucket && s.label(key) == value) gained[bound_of(s)] += s.value;
  if (&before != &now) {
    std::map<double, double> was;
    for (const Sample& s : before.samples)
      if (s.name == bucket && s.label(key) == value) was[bound_of(s)] += s.value;
    // A bucket that went down: the agent restarted or the sink was replaced; its count is all new.
    const bool reset =
        std::any_of(gained.begin(), gained.end(), [&](const auto& g) { return g.second < was[g.first]; });
    if (!reset)
      for (auto& [bound, count] : gained) count -= was[bound];
  }
  if (gained.empty()) return -1;
  const double total = gained.rbegin()->second;
  if (total <= 0) return -1;
  const double rank = q * total;
  double lower = 0, below = 0;
  for (const auto& [bound, count] : gained) {
    if (count >= rank) {
      if (std::isinf(bound)) return lower;  // beyond the last bound: say the last bound
      return count > below ? lower + (bound - lower) * (rank - below) / (count - below) : bound;
    }
    lower = bound;
    below = count;
  }
  return lower;
}

TopView compute_view(const Scrape& before, const Scrape& now) {
  TopView v;
  v.seconds = &before == &now ? 0 : std::chrono::duration<double>(now.at - before.at).count();
  const double dt = v.seconds;
  for (const std::string& name : names_in(now, metric_names::kSourceEventsReceivedTotal.name, "source")) {
    SourceRow r{name};
    r.events_per_s = rate_of(before, now, dt, metric_names::kSourceEventsReceivedTotal.name, "source", name);
    r.bytes_per_s = rate_of(before, now, dt, metric_names::kSourceBytesReceivedTotal.name, "source", name);
    r.connections = sum_of(now, metric_names::kSourceConnections.name, "source", name);
    v.events_in_per_s += r.events_per_s;
    v.sources.push_back(std::move(r));
  }
  for (const std::string& name : names_in(now, metric_names::kChannelCapacityEvents.name, "channel")) {
    ChannelRow r{name};
    r.events = sum_of(now, metric_names::kChannelEvents.name, "channel", name);
    r.capacity = sum_of(now, metric_names::kChannelCapacityEvents.name, "channel", name);
    r.put_per_s = rate_of(before, now, dt, metric_names::kChannelEventsPutTotal.name, "channel", name);
    r.taken_per_s = rate_of(before, now, dt, metric_names::kChannelEventsTakenTotal.name, "channel", name);
    r.blocked_percent =
        100 * rate_of(before, now, dt, metric_names::kChannelPutBlockedSecondsTotal.name, "channel", name);
    if (has(now, metric_names::kChannelDiskEvents.name, "channel", name))
      r.disk_events = sum_of(now, metric_names::kChannelDiskEvents.name, "channel", name);
    v.channels.push_back(std::move(r));
  }
  for (const std::string& name : names_in(now, metric_names::kSinkEventsSentTotal.name, "sink")) {
    SinkRow r{name};
    r.sent_per_s = rate_of(before, now, dt, metric_names::kSinkEventsSentTotal.name, "sink", name);
    r.kafka_queue = sum_of(now, metric_names::kSinkKafkaQueueMessages.name, "sink", name);
    const double avg = max_of(now, metric_names::kKafkaBrokerRttAvgSeconds.name, "sink", name, -1);
    const double p99 = max_of(now, metric_names::kKafkaBrokerRttP99Seconds.name, "sink", name, -1);
    r.rtt_avg_ms = avg < 0 ? -1 : avg * 1000;
    r.rtt_p99_ms = p99 < 0 ? -1 : p99 * 1000;
    for (const Sample& s : now.samples)
      if (s.name == metric_names::kKafkaBrokerUp.name && s.label("sink") == name) {
        ++r.brokers;
        r.brokers_up += s.value;
      }
    if (dt > 0) {
      const double p50 =
          histogram_quantile_between(before, now, metric_names::kPipelineLatencySeconds.name, "sink", name, 0.5);
      const double p99l =
          histogram_quantile_between(before, now, metric_names::kPipelineLatencySeconds.name, "sink", name, 0.99);
      r.latency_p50_ms = p50 < 0 ? -1 : p50 * 1000;
      r.latency_p99_ms = p99l < 0 ? -1 : p99l * 1000;
    }
    v.events_out_per_s += r.sent_per_s;
    v.sinks.push_back(std::move(r));
  }
  v.failures = failures_of(before, now, dt);
  return v;
}

std::vector<std::string> render_view(const TopView& v, const std::string& title) {
  std::vector<std::string> lines;
  const bool rates = v.seconds > 0;
  const auto rate = [&](double r) { return rates ? format_number(r) : std::string("..."); };
  lines.push_back(title);
  lines.push_back(rates ? "in " + format_number(v.events_in_per_s) + " events/s, out " +
                              format_number(v.events_out_per_s) + " events/s (over the last " + fixed(v.seconds, 1) +
                              " s)"
                        : "rates after the next refresh");
  lines.emplace_back();
  lines.push_back(row("SOURCES", {"events/s", "MB/s", "connections"}));
  for (const SourceRow& r : v.sources)
    lines.push_back(row(
        r.name, {rate(r.events_per_s), rates ? fixed(r.bytes_per_s / 1e6, 1) : "...", format_number(r.connections)}));
  lines.emplace_back();
  lines.push_back(row("CHANNELS", {"events", "capacity", "fill %", "put/s", "taken/s", "blocked %", "on disk"}));
  for (const ChannelRow& r : v.channels)
    lines.push_back(
        row(r.name, {format_number(r.events), format_number(r.capacity),
                     r.capacity > 0 ? fixed(100 * r.events / r.capacity, 1) : "-", rate(r.put_per_s),
                     rate(r.taken_per_s), rates ? fixed(r.blocked_percent, 1) : "...", format_number(r.disk_events)}));
  lines.emplace_back();
  lines.push_back(
      row("SINKS", {"sent/s", "kafka queue", "rtt avg ms", "rtt p99 ms", "brokers up", "lat p50 ms", "lat p99 ms"}));
  for (const SinkRow& r : v.sinks)
    lines.push_back(
        row(r.name, {rate(r.sent_per_s), format_number(r.kafka_queue), fixed(r.rtt_avg_ms, 2), fixed(r.rtt_p99_ms, 2),
                     r.brokers > 0 ? format_number(r.brokers_up) + "/" + format_number(r.brokers) : "-",
                     fixed(r.latency_p50_ms, 1), fixed(r.latency_p99_ms, 1)}));
  lines.emplace_back();
  if (v.failures.empty()) {
    lines.push_back("FAILURES  none counted since the agent started");
  } else {
    lines.push_back("FAILURES (since the agent started)");
    for (const FailureRow& f : v.failures)
      lines.push_back(
          row("  " + f.component, {format_number(f.total), rates ? format_number(f.per_s) + "/s" : "..."}, 24, 14) +
          "  " + f.what + (f.reason.empty() ? "" : " (" + f.reason + ")"));
  }
  // Names and reasons are the agent's text: no byte of theirs moves the cursor or sends an escape.
  for (std::string& line : lines)
    std::replace_if(
        line.begin(), line.end(), [](char c) { return (c >= 0 && c < ' ') || c == '\x7f'; }, '?');
  return lines;
}

std::vector<std::string> fit_to_screen(std::vector<std::string> lines, size_t columns, size_t rows) {
  if (rows == 1 && lines.size() > 1) {
    lines.resize(1);  // the title
  } else if (rows >= 2 && lines.size() > rows) {
    const size_t shown = rows - 1;
    const size_t hidden = lines.size() - shown;
    lines.resize(shown);
    lines.push_back("... " + format_number(static_cast<double>(hidden)) + " more lines (a taller terminal shows them)");
  }
  // One column short of the width: a line that filled it would leave the cursor waiting to wrap,
  // where the erase after it takes the last character (xterm) or the next row is used (others).
  const size_t width = columns > 1 ? columns - 1 : 1;
  for (std::string& line : lines)
    if (line.size() > width) line.resize(width);
  return lines;
}

}  // namespace sluice::top
