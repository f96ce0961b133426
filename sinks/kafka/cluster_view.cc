#include "sinks/kafka/cluster_view.h"

#include <algorithm>

#include <spdlog/spdlog.h>  // fmt::format

#include "sinks/kafka/delivery_outcome.h"  // Kafka's error codes

namespace sluice::kafka {
namespace {

// What a topic's metadata error says of it (librdkafka passes the broker's codes through).
TopicView::Known known_from(int error) {
  switch (error) {
    case 0: return TopicView::Known::exists;
    case kErrUnknownTopicOrPart:
    case kErrUnknownTopicId: return TopicView::Known::missing;
    case kErrTopicException:
    case kErrTopicAuthorizationFailed: return TopicView::Known::refused;
    default:  // LEADER_NOT_AVAILABLE while it is being created, and the like: ask again
      return TopicView::Known::not_yet;
  }
}

}  // namespace

ClusterView::ClusterView(ClusterQuery& query, Options options) : query_(query), options_(options) {}

ClusterView::~ClusterView() { stop(); }

void ClusterView::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void ClusterView::request_stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void ClusterView::stop() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

void ClusterView::finish_by(Clock::time_point deadline) {
  std::lock_guard lock(mutex_);
  finish_by_ = std::min(finish_by_, deadline);
}

std::optional<std::chrono::milliseconds> ClusterView::next_question_timeout() const {
  std::lock_guard lock(mutex_);
  if (stopping_) return std::nullopt;  // the producer goes: no more questions
  if (finish_by_ == Clock::time_point::max()) return options_.timeout;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(finish_by_ - Clock::now());
  if (left < kShortestQuestion) return std::nullopt;
  return std::min(options_.timeout, left);
}

TopicView ClusterView::topic(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto [it, added] = topics_.try_emplace(name);
  if (added) {
    it->second.wanted_since = Clock::now();
    woken_ = true;
    wake_.notify_all();
  }
  return it->second;
}

std::optional<TopicView> ClusterView::find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = topics_.find(name);
  if (it == topics_.end()) return std::nullopt;
  return it->second;
}

void ClusterView::forget(const std::string& name) {
  std::lock_guard lock(mutex_);
  topics_.erase(name);
}

void ClusterView::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  wake_.notify_all();
}

void ClusterView::confirm(const std::string& topic, int32_t partition) {
  std::lock_guard lock(mutex_);
  const auto it = topics_.find(topic);
  if (it == topics_.end() || partition < 0 || static_cast<size_t>(partition) >= it->second.partitions.size()) return;
  it->second.partitions[static_cast<size_t>(partition)].confirm = true;
}

Clock::time_point ClusterView::answered_at() const {
  std::lock_guard lock(mutex_);
  return answered_at_;
}

bool ClusterView::broker_listed(int32_t id) const {
  std::lock_guard lock(mutex_);
  return std::find(brokers_.begin(), brokers_.end(), id) != brokers_.end();
}

bool ClusterView::in_trouble_locked() const {
  const auto now = Clock::now();
  return std::any_of(topics_.begin(), topics_.end(), [&](const auto& entry) {
    const TopicView& t = entry.second;
    // A topic the cluster lacks or refuses is asked about often while it may be on its way (being
    // created); after that as often as the rest: a sender naming topics that do not exist must
    // not keep every producer asking for the whole cluster's metadata twice a second.
    if (t.known == TopicView::Known::missing || t.known == TopicView::Known::refused)
      return now - t.wanted_since < options_.missing_patience;
    return t.known != TopicView::Known::exists || t.unlisted > 0 ||
           std::any_of(t.partitions.begin(), t.partitions.end(), [](const PartitionView& p) { return !p.served; });
  });
}

void ClusterView::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const auto interval = in_trouble_locked() ? options_.trouble_interval : options_.steady_interval;
    wake_.wait_for(lock, interval, [&] { return woken_ || stopping_; });
    if (stopping_) break;
    woken_ = false;
    lock.unlock();
    refresh();
    lock.lock();
  }
}

void ClusterView::refresh() {
  std::vector<std::string> names;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, view] : topics_) names.push_back(name);
  }
  if (names.empty()) return;
  const auto timeout = next_question_timeout();
  if (!timeout) return;
  const ClusterMetadata md = query_.metadata(names, *timeout);
  const auto now = Clock::now();
  struct Question {
    std::string topic;
    int32_t partition, leader;
    bool confirming;  // served already: an answer says when, no answer changes nothing
  };
  std::vector<Question> questions;  // served partitions are not asked again while their leader stays
  {
    std::lock_guard lock(mutex_);
    if (!md.answered) {
      // What was known stays (a partition served before is not unserved by a broker that does
      // not answer: the sink's producer sees that outage itself); what was not known says why.
      for (auto& [name, view] : topics_)
        if (view.known == TopicView::Known::not_yet) view.problem = "no broker answered (" + md.error + ")";
      return;
    }
    answered_at_ = now;
    brokers_ = md.brokers;
    for (const TopicMetadata& t : md.topics) {
      auto it = topics_.find(t.topic);
      if (it == topics_.end()) continue;  // forgotten meanwhile
      TopicView& view = it->second;
      view.answered_at = now;
      // One answer that does not list a topic (a broker whose metadata lags, during a rolling
      // restart) is not enough to call it missing: its events would be discarded. Two in a row are.
      if (known_from(t.error) == TopicView::Known::missing && ++view.unlisted < 2) {
        if (view.known != TopicView::Known::exists) view.problem = "topic " + t.topic + " not listed by the cluster";
        continue;
      }
      if (known_from(t.error) != TopicView::Known::missing) view.unlisted = 0;
      view.known = known_from(t.error);
      view.error = t.error;
      if (view.known != TopicView::Known::exists) {
        view.partitions.clear();
        view.problem = view.known == TopicView::Known::missing
                           ? "topic " + t.topic + " does not exist"
                           : fmt::format("the cluster refuses topic {} (error {})", t.topic, t.error);
        continue;
      }
      std::vector<PartitionView> partitions(t.leaders.size());
      std::string problem;
      for (size_t p = 0; p < t.leaders.size(); ++p) {
        partitions[p].leader = t.leaders[p];
        const bool same_leader = p < view.partitions.size() && view.partitions[p].leader == t.leaders[p];
        partitions[p].served = same_leader && view.partitions[p].served && t.leaders[p] >= 0;
        if (same_leader) partitions[p].leader_answered = view.partitions[p].leader_answered;
        const bool confirm = same_leader && view.partitions[p].confirm;
        if (t.leaders[p] < 0) {
          if (problem.empty()) problem = fmt::format("partition {} of {} has no leader", p, t.topic);
        } else if (!partitions[p].served || confirm) {
          questions.push_back({t.topic, static_cast<int32_t>(p), t.leaders[p], partitions[p].served});
        }
      }
      view.partitions = std::move(partitions);
      view.problem = problem;
    }
  }
  // Each question waits for its answer: a leader that does not answer is asked no more this round
  // (its other partitions wait for the next), so that one round stays within a few timeouts.
  std::vector<int32_t> silent;
  for (const Question& q : questions) {
    if (std::find(silent.begin(), silent.end(), q.leader) != silent.end()) continue;
    const auto question_timeout = next_question_timeout();
    if (!question_timeout) return;
    const ClusterQuery::LeaderAnswer answer = query_.ask_leader(q.topic, q.partition, *question_timeout);
    std::lock_guard lock(mutex_);
    if (answer.silent) silent.push_back(q.leader);
    auto it = topics_.find(q.topic);
    if (it == topics_.end() || static_cast<size_t>(q.partition) >= it->second.partitions.size()) continue;
    PartitionView& p = it->second.partitions[static_cast<size_t>(q.partition)];
    if (p.leader != q.leader) continue;  // a newer answer named another leader meanwhile
    if (answer.why_not.empty()) p.leader_answered = Clock::now();
    if (q.confirming) continue;  // served, and stays so: the sink's producer sees its own outage
    p.served = answer.why_not.empty();
    if (!p.served && it->second.problem.empty())
      it->second.problem = fmt::format("leader {} of partition {} of {} does not answer for it yet ({})", q.leader,
                                       q.partition, q.topic, answer.why_not);
  }
}

}  // namespace sluice::kafka
