// Producer's watch over its connections and partitions: which broker connection went down (what
// acks=0 may have lost with it), and the stall watch that librdkafka's statistics feed. The rest
// of Producer is in producer.cc and producer_produce.cc.
#include "sinks/kafka/producer.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "sinks/kafka/recent_writes.h"

namespace sluice::kafka {

// librdkafka's reason starts with the broker's name, "host:port/id: ..." ("/bootstrap" for a
// connection made before the cluster named its brokers: no produce goes there).
// librdkafka calls the error callback for a connection that could not be made (the broker is
// down); one that was up and closed (a leader that moved, a broker that restarted) it only logs,
// at most once in 30 s alike: what the statistics count (broker_disconnected) tells those apart.
void Producer::connection_lost(const char* reason) {
  const std::string_view text(reason);
  const size_t colon = text.find(": ");
  const size_t slash = text.rfind('/', colon);
  if (colon == std::string_view::npos || slash == std::string_view::npos) return;
  int32_t broker = -1;
  const char* first = text.data() + slash + 1;
  const char* last = text.data() + colon;
  if (std::from_chars(first, last, broker).ptr != last || broker < 0) return;
  {
    std::lock_guard lock(stats_mutex_);
    ++told_by_error_[broker];
  }
  broker_disconnected(broker);
}

void Producer::broker_disconnected(int32_t broker) {
  set_write_tick();
  std::vector<std::shared_ptr<ConnectionWatcher>> watchers;
  {
    std::lock_guard lock(watchers_mutex_);
    for (const auto& w : watchers_)
      if (auto held = w.lock()) watchers.push_back(std::move(held));
  }
  for (const auto& w : watchers) w->connection_lost(broker, write_tick());
}

// How recent the cluster view's last answer must be for the stall watch to go by it: its steady
// interval (10 s) and a question's timeout (2 s), and some.
constexpr auto kViewFreshness = std::chrono::seconds(15);

void Producer::observe(ProducerStatistics stats) {
  // Each partition something was produced to, as the producer counts it, librdkafka sends it and
  // the cluster serves it.
  std::map<std::pair<std::string, int32_t>, int32_t> client_leaders;
  for (const PartitionStats& p : stats.partitions) client_leaders[{p.topic, p.partition}] = p.leader;
  const auto now = Clock::now();
  ProgressReport report{.any_broker_up = stats.any_broker_up(),
                        .cluster_answered = now - view_.answered_at() < kViewFreshness};
  bool leader_lost = false;
  {
    std::lock_guard lock(topics_mutex_);
    for (const auto& [name, topic] : topics_) {
      const TopicCounters& c = *topic.counters;
      const int32_t counted = c.capacity.load(std::memory_order_acquire);
      if (!counted) continue;
      const TopicView view = view_.find(name).value_or(TopicView{});  // (a topic let go stays let go)
      const PartitionCounters* partitions = c.partitions.load(std::memory_order_acquire);
      for (int32_t p = 0; p < counted; ++p) {
        const uint64_t produced = partitions[p].produced.load(std::memory_order_relaxed);
        if (produced == 0) continue;  // never used
        const uint64_t reported = partitions[p].reported();
        const auto client = client_leaders.find({name, p});
        const int32_t client_leader = client == client_leaders.end() ? -1 : client->second;
        const int32_t cluster_leader = view.leader(p);
        // librdkafka lost the partition's leader: the view asks the cluster at once (the sink keeps
        // events of a partition without a leader aside; librdkafka's may be wrong, issue 5430).
        leader_lost |= client_leader < 0 && produced > reported;
        report.partitions.push_back({.topic = name,
                                     .partition = p,
                                     .outstanding = produced > reported ? produced - reported : 0,
                                     .delivered = partitions[p].delivered.load(std::memory_order_relaxed),
                                     .client_leader = client_leader,
                                     .cluster_leader = cluster_leader,
                                     .served = view.served(p),
                                     .leader_down = stats.broker_down(cluster_leader),
                                     .leader_answered = view.leader_answered(p)});
      }
    }
  }
  // librdkafka cannot reach the leader while messages wait: the view asks the leader itself whether
  // it is there (the stall watch's evidence that this is no outage).
  for (const PartitionProgress& p : report.partitions)
    if (p.outstanding > 0 && report.unreached(p)) view_.confirm(p.topic, p.partition);
  if (leader_lost) view_.wake();
  let_go_of_unused_topics();  // those released while something of them was still in librdkafka
  std::lock_guard lock(stats_mutex_);
  if (!stalled()) {
    if (auto verdict = stall_watch_.observe(now, report)) {
      spdlog::error(
          "kafka producer: partition {}; a new producer takes over (librdkafka can keep a partition "
          "from its leader after an outage)",
          *verdict);
      stall_reason_ = std::move(*verdict);
      stalled_.store(true, std::memory_order_relaxed);
    }
    if (auto note = stall_watch_.take_wait_note()) spdlog::warn("kafka producer: partition {}", *note);
  }
  // acks=0: a connection that was up and went down since the last report (librdkafka counts each)
  // may have taken along what was written to it. Those the error callback told of since the last
  // report were counted then (RecentWrites::take cleared what was written before): only more
  // disconnects than that are counted now, which takes what was written since.
  if (acks_zero_)
    for (const BrokerStats& b : stats.brokers) {
      uint64_t& seen = disconnects_seen_[b.id];
      const auto told = told_by_error_.find(b.id);
      if (b.disconnects > seen + (told == told_by_error_.end() ? 0 : told->second)) broker_disconnected(b.id);
      seen = b.disconnects;
    }
  told_by_error_.clear();
  broker_stats_ = std::move(stats.brokers);
}

}  // namespace sluice::kafka
