// Flume's sink processors as gates over Sluice's sinks (agent/api/sink_group.h): default,
// failover and load_balance.

#include "sink_processors/sink_processors.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <mutex>

#include <spdlog/spdlog.h>

#include "agent/api/metric_names.h"
#include "agent/api/property_table.h"
#include "agent/api/sink_group.h"

namespace sluice::sink_processors {
namespace {

using std::chrono::milliseconds;

// Flume's penalty: 1 s doubled per sequential failure (2 s at the first), at most `cap`.
milliseconds penalty(unsigned sequential_failures, milliseconds cap) {
  const milliseconds doubled(int64_t{1000} << std::min(sequential_failures, 20u));
  return std::min(doubled, cap);
}

// What both gates keep of a member: set aside until when, after how many failures in a row.
struct Member {
  std::string name;
  bool set_aside = false;
  unsigned sequential_failures = 0;
  Clock::time_point retry_at{};
  uint64_t set_aside_count = 0;
  bool absent = false;  // it does not run: never chosen
};

// The group's members and their lock; the metrics every gate writes.
class GateBase : public SinkGroup {
 public:
  GateBase(std::string group, const std::vector<std::string>& sinks) : group_(std::move(group)) {
    for (const std::string& sink : sinks) members_.push_back({sink});
  }

  void dissolve() override {
    std::lock_guard lock(mutex_);
    dissolved_ = true;
  }

  void write_metrics(MetricsWriter& w) const override {
    std::lock_guard lock(mutex_);
    const Clock::time_point now = Clock::now();
    for (size_t i = 0; i < members_.size(); ++i) {
      const MetricLabels labels{{"group", group_}, {"sink", members_[i].name}};
      w.gauge(metric_names::kSinkGroupSinkActive, labels, taking_locked(i, now) ? 1 : 0);
      w.counter(metric_names::kSinkGroupSinkSetAsideTotal, labels, static_cast<double>(members_[i].set_aside_count));
    }
    w.counter(metric_names::kSinkGroupFailoversTotal, {{"group", group_}}, static_cast<double>(failovers_));
  }

 protected:
  // Would member `i` take now (for the gauge; may_take() without its side effects)?
  virtual bool taking_locked(size_t i, Clock::time_point now) const = 0;

  const std::string group_;
  mutable std::mutex mutex_;
  std::vector<Member> members_;
  uint64_t failovers_ = 0;
  bool dissolved_ = false;  // replaced at a reload: every member still running may take
};

// failover ---------------------------------------------------------------------------------

struct FailoverConfig {
  milliseconds max_penalty{30000};
};

const config::PropertyTable<FailoverConfig> kFailoverProperties{
    {"maxpenalty",
     &FailoverConfig::max_penalty,
     "30000",
     "The longest a failed sink is set aside (ms): 2 s after its first failure, doubling with each failed retry. "
     "processor.priority.<sink> (an integer, higher first) orders the sinks; unset ones come after, in list order.",
     {.min = 1}},
};

class FailoverGate final : public GateBase {
 public:
  FailoverGate(std::string group, const std::vector<std::string>& sinks, std::vector<int64_t> priorities,
               milliseconds max_penalty)
      : GateBase(std::move(group), sinks), priorities_(std::move(priorities)), max_penalty_(max_penalty) {
    probing_.assign(members_.size(), false);
    active_ = active_locked();
  }

  bool may_take(size_t i, Clock::time_point now) override {
    std::lock_guard lock(mutex_);
    if (dissolved_) return true;
    Member& m = members_[i];
    if (!m.set_aside) return i == active_;
    // Its penalty served, a set-aside sink tries one take (Flume retries it before the active one).
    if (now < m.retry_at || probing_[i] || m.absent) return false;
    probing_[i] = true;
    return true;
  }

  void took_nothing(size_t i) override {
    std::lock_guard lock(mutex_);
    probing_[i] = false;  // its retry waits for events to try with
  }

  void leave(size_t i) override {
    std::lock_guard lock(mutex_);
    members_[i].absent = true;
    change_active_locked();
  }

  void settled(size_t i, bool delivered, Clock::time_point now) override {
    std::lock_guard lock(mutex_);
    Member& m = members_[i];
    if (delivered) {
      // Only its retry's take brings it back: one taken before it was set aside proves nothing.
      if (!m.set_aside || !probing_[i]) return;
      m.set_aside = false;
      m.sequential_failures = 0;
      probing_[i] = false;
      spdlog::info("sink group {}: sink {} delivers again and is live", group_, m.name);
      change_active_locked();
      return;
    }
    // Takes made before it was set aside settle failed now too: only its retry's failure counts.
    if ((m.set_aside && !probing_[i]) || m.absent) return;
    probing_[i] = false;
    m.sequential_failures = m.set_aside ? m.sequential_failures + 1 : 1;
    m.set_aside = true;
    m.retry_at = now + penalty(m.sequential_failures, max_penalty_);
    ++m.set_aside_count;
    const auto ms = std::chrono::duration_cast<milliseconds>(m.retry_at - now).count();
    if (i == active_) {
      ++failovers_;
      change_active_locked();
      if (active_ < members_.size())
        spdlog::warn("sink group {}: sink {} failed to deliver: set aside for {} ms; sink {} takes over", group_,
                     m.name, ms, members_[active_].name);
      else
        spdlog::error(
            "sink group {}: sink {} failed to deliver and every sink of the group is set aside: its "
            "events wait in their channels until one is back (in at most {} ms)",
            group_, m.name, ms);
    } else {
      spdlog::warn("sink group {}: sink {} failed again: set aside for {} ms", group_, m.name, ms);
    }
  }

 private:
  bool taking_locked(size_t i, Clock::time_point) const override { return dissolved_ || i == active_; }

  // The live sink with the highest priority (members_.size() if none is live).
  size_t active_locked() const {
    size_t best = members_.size();
    for (size_t i = 0; i < members_.size(); ++i)
      if (!members_[i].set_aside && !members_[i].absent &&
          (best == members_.size() || priorities_[i] > priorities_[best]))
        best = i;
    return best;
  }

  void change_active_locked() {
    const size_t was = active_;
    active_ = active_locked();
    if (active_ != was && was < members_.size() && active_ < members_.size() && !members_[was].set_aside)
      spdlog::info("sink group {}: sink {} takes over from sink {} (higher priority)", group_, members_[active_].name,
                   members_[was].name);
  }

  const std::vector<int64_t> priorities_;
  const milliseconds max_penalty_;
  std::vector<bool> probing_;  // a set-aside sink's one take after its penalty is in flight
  size_t active_ = 0;
};

std::shared_ptr<SinkGroup> make_failover(const config::ComponentConfig& c) {
  constexpr std::string_view kPriority = "priority.";
  config::ComponentConfig own = c;  // priority.<sink> is read here, the rest by the table
  std::erase_if(own.properties, [&](const auto& entry) { return entry.first.starts_with(kPriority); });
  const FailoverConfig config = config::bind(kFailoverProperties, own);
  // Unset priorities come after every set one, in list order (Flume gives them -1, -2, ...).
  std::vector<std::optional<int64_t>> given(c.channels.size());
  for (const auto& [key, value] : c.properties) {
    if (!key.starts_with(kPriority)) continue;
    const std::string sink = key.substr(kPriority.size());
    const auto it = std::find(c.channels.begin(), c.channels.end(), sink);
    if (it == c.channels.end()) c.fail(key, "sink '" + sink + "' is not one of the group's sinks");
    given[static_cast<size_t>(it - c.channels.begin())] =
        config::parse_integer(value.value, {c.full_key(key), value.where}, {.min = INT32_MIN, .max = INT32_MAX});
  }
  int64_t lowest = 0;
  for (const auto& p : given)
    if (p) lowest = std::min(lowest, *p);
  std::vector<int64_t> priorities;
  for (size_t i = 0; i < given.size(); ++i) {
    priorities.push_back(given[i] ? *given[i] : --lowest);
    for (size_t j = 0; j < i; ++j)
      if (priorities[j] == priorities[i])
        c.fail("priority." + c.channels[i], "sinks " + c.channels[j] + " and " + c.channels[i] + " share priority " +
                                                std::to_string(priorities[i]) +
                                                ": Flume would leave the second out of the group; give each its own");
  }
  return std::make_shared<FailoverGate>(c.name, c.channels, std::move(priorities), config.max_penalty);
}

// load_balance -----------------------------------------------------------------------------

struct LoadBalanceConfig {
  bool backoff = false;
  std::string selector;
  milliseconds max_time_out{30000};
};

const config::PropertyTable<LoadBalanceConfig> kLoadBalanceProperties{
    {"backoff", &LoadBalanceConfig::backoff, "false",
     "Set a sink whose take failed aside (2 s, doubling with each failure in a row); without it, it keeps taking "
     "after its own retry backoff."},
    {"selector", &LoadBalanceConfig::selector, "round_robin",
     "round_robin or random (any case): accepted for Flume's files; Sluice's sinks each take as soon as they are "
     "ready, so a faster sink takes more (a custom selector class is refused)."},
    {"selector.maxTimeOut",
     &LoadBalanceConfig::max_time_out,
     "30000",
     "The longest a sink is set aside with backoff (ms).",
     {.min = 1}},
};

class LoadBalanceGate final : public GateBase {
 public:
  LoadBalanceGate(std::string group, const std::vector<std::string>& sinks, bool backoff, milliseconds max_time_out)
      : GateBase(std::move(group), sinks), backoff_(backoff), max_time_out_(max_time_out) {}

  bool may_take(size_t i, Clock::time_point now) override {
    std::lock_guard lock(mutex_);
    return taking_locked(i, now);
  }

  void leave(size_t i) override {
    std::lock_guard lock(mutex_);
    members_[i].absent = true;  // it asks nothing any more: nothing else to do
  }

  void settled(size_t i, bool delivered, Clock::time_point now) override {
    if (!backoff_) return;
    std::lock_guard lock(mutex_);
    Member& m = members_[i];
    if (delivered) {
      if (m.sequential_failures && now >= m.retry_at)
        spdlog::info("sink group {}: sink {} delivers again", group_, m.name);
      if (now >= m.retry_at) m.sequential_failures = 0;
      return;
    }
    if (now < m.retry_at) return;  // a take made before it was set aside
    ++m.sequential_failures;
    m.retry_at = now + penalty(m.sequential_failures, max_time_out_);
    ++m.set_aside_count;
    spdlog::warn("sink group {}: sink {} failed to deliver: set aside for {} ms, the others take its share", group_,
                 m.name, std::chrono::duration_cast<milliseconds>(m.retry_at - now).count());
  }

 private:
  bool taking_locked(size_t i, Clock::time_point now) const override {
    return !members_[i].absent && (dissolved_ || !backoff_ || now >= members_[i].retry_at);
  }

  const bool backoff_;
  const milliseconds max_time_out_;
};

std::shared_ptr<SinkGroup> make_load_balance(const config::ComponentConfig& c) {
  const LoadBalanceConfig config = config::bind(kLoadBalanceProperties, c);
  std::string selector = config.selector;
  std::transform(selector.begin(), selector.end(), selector.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (selector != "round_robin" && selector != "random")
    c.fail("selector", "\"" + config.selector +
                           "\": expected round_robin or random (any case); custom selector classes are not supported: "
                           "Sluice runs no Java");
  return std::make_shared<LoadBalanceGate>(c.name, c.channels, config.backoff, config.max_time_out);
}

// default ----------------------------------------------------------------------------------

const config::PropertyTable<LoadBalanceConfig> kNoProperties{};  // any config struct: the table is empty

std::shared_ptr<SinkGroup> make_default(const config::ComponentConfig& c) {
  config::bind(kNoProperties, c);
  if (c.channels.size() != 1)
    c.fail("type", "is default (or not set), which runs one sink, and the group lists " +
                       std::to_string(c.channels.size()) + ": choose failover or load_balance");
  return nullptr;  // a sink alone
}

}  // namespace

const ComponentSpec kDefaultProcessorSpec{
    .kind = config::Kind::sink_group,
    .type = "default",
    .aliases = {"org.apache.flume.sink.DefaultSinkProcessor"},
    .doc = "One sink, as if in no group (Flume's default processor).",
    .describe = [] { return config::describe(kNoProperties); },
    .make_sink_group = &make_default,
};

const ComponentSpec kFailoverProcessorSpec{
    .kind = config::Kind::sink_group,
    .type = "failover",
    .aliases = {"org.apache.flume.sink.FailoverSinkProcessor"},
    .doc =
        "Only the live sink with the highest `processor.priority.<sink>` takes from its channel; one whose take "
        "fails (its events rolled back) is set aside with a growing penalty, then tries one take, and is live again "
        "once it delivers.",
    .describe = [] { return config::describe(kFailoverProperties); },
    .make_sink_group = &make_failover,
};

const ComponentSpec kLoadBalanceProcessorSpec{
    .kind = config::Kind::sink_group,
    .type = "load_balance",
    .aliases = {"org.apache.flume.sink.LoadBalancingSinkProcessor"},
    .doc = "Every live sink of the group takes from its channel; with backoff a failing one is set aside.",
    .describe = [] { return config::describe(kLoadBalanceProperties); },
    .make_sink_group = &make_load_balance,
};

}  // namespace sluice::sink_processors
