#pragma once
// What the Kafka cluster itself says of the topics a producer sends to, asked from a thread of its
// own: whether each topic exists, its partitions, the broker leading each, and whether that leader
// already answers for it (a ListOffsets query to it succeeded: the partition is "served").
//
// Why ask besides librdkafka:
//   - A partition is fed only once it is served. A broker that does not serve a partition yet (a
//     topic it has just created) refuses a produce to it, and with acks=0 it answers by closing
//     the connection: what was in flight on it is gone without a word (seen: whole batches of a new
//     topic's first events). At start, and for each topic first met, the sink waits for this view.
//   - librdkafka's own view can go wrong: after an outage it can keep a partition from the leader
//     the cluster names (librdkafka issue 5430). Comparing the two is how the stall watch sees it.
//
// Lifecycle: made and started with its producer; asks at once when a topic is new or wake() is
// called, every `trouble_interval` while some topic is not served (one the cluster lacks: for its
// first `missing_patience`), else every `steady_interval`;
// stop() joins the thread (before the producer's handle goes).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/api/deadline.h"

namespace sluice::kafka {

// The cluster's answers, as ClusterQuery gives them (librdkafka's error codes).
struct TopicMetadata {
  std::string topic;
  int error = 0;                 // librdkafka's rd_kafka_resp_err_t for the topic (0: it exists)
  std::vector<int32_t> leaders;  // per partition, in order: the leader's broker id, -1 for none
};
struct ClusterMetadata {
  bool answered = false;         // false: no broker answered (the error says why)
  std::string error;             // when not answered
  std::vector<int32_t> brokers;  // the brokers the cluster lists (registered, alive)
  std::vector<TopicMetadata> topics;
};

// How the view asks; the producer implements it with librdkafka (and the tests with a fake).
class ClusterQuery {
 public:
  virtual ~ClusterQuery() = default;
  // The metadata of these topics (asking for one may create it, if the producer allows that).
  virtual ClusterMetadata metadata(const std::vector<std::string>& topics, std::chrono::milliseconds timeout) = 0;
  // Asks the leader of the partition for its offsets.
  struct LeaderAnswer {
    std::string why_not;  // empty: it answered for the partition
    bool silent = false;  // no answer at all (timed out, unreachable): its other partitions wait a round
  };
  virtual LeaderAnswer ask_leader(const std::string& topic, int32_t partition, std::chrono::milliseconds timeout) = 0;
};

struct PartitionView {
  int32_t leader = -1;                  // as the cluster names it; -1: none
  bool served = false;                  // its leader answered for it (and still leads it)
  bool confirm = false;                 // asked to ask its leader again although served (confirm())
  Clock::time_point leader_answered{};  // when its leader last answered for it
};

struct TopicView {
  enum class Known : uint8_t {
    not_yet,  // not asked yet, or no answer yet
    exists,
    missing,  // the cluster does not have it (UNKNOWN_TOPIC_OR_PART)
    refused,  // the cluster refuses it: an invalid name, not authorized (`error`)
  };
  Known known = Known::not_yet;
  int error = 0;                          // missing, refused: the cluster's error code
  std::vector<PartitionView> partitions;  // exists
  std::string problem;                    // why some partition is not served, for the log
  Clock::time_point wanted_since{};       // when a sink first asked for it
  Clock::time_point answered_at{};        // when the cluster last answered for it
  int unlisted = 0;                       // answers in a row that did not list it (missing after two)

  bool served(int32_t partition) const {
    return known == Known::exists && partition >= 0 && static_cast<size_t>(partition) < partitions.size() &&
           partitions[static_cast<size_t>(partition)].served;
  }
  int32_t leader(int32_t partition) const {
    return partition >= 0 && static_cast<size_t>(partition) < partitions.size()
               ? partitions[static_cast<size_t>(partition)].leader
               : -1;
  }
  int32_t partition_count() const { return static_cast<int32_t>(partitions.size()); }
  Clock::time_point leader_answered(int32_t partition) const {
    return partition >= 0 && static_cast<size_t>(partition) < partitions.size()
               ? partitions[static_cast<size_t>(partition)].leader_answered
               : Clock::time_point{};
  }
};

class ClusterView {
 public:
  struct Options {
    std::chrono::milliseconds steady_interval{10'000};   // every topic served: asked again this often
    std::chrono::milliseconds trouble_interval{500};     // some topic not (yet) served
    std::chrono::milliseconds missing_patience{30'000};  // a missing topic counts as trouble this long
    std::chrono::milliseconds timeout{2'000};            // one question's bound
  };
  ClusterView(ClusterQuery& query, Options options);
  ~ClusterView();
  ClusterView(const ClusterView&) = delete;
  ClusterView& operator=(const ClusterView&) = delete;

  void start();
  // Asks no more once the question under way (if any) ends: so that many views, each maybe inside
  // a 2 s metadata call while no broker is up, wind down side by side before they are joined.
  void request_stop();
  void stop();  // joins its thread; a question under way ends within its timeout
  // The stop comes at `deadline` (the sink's shutdown deadline): no question outlasts it, so that
  // joining the view adds nothing to the stop. Each question's bound shrinks to the time left, and
  // none is asked once less than kShortestQuestion is left.
  void finish_by(Clock::time_point deadline);
  static constexpr std::chrono::milliseconds kShortestQuestion{100};

  // What the view holds of `topic` now; the first call adds it to the topics asked about (soon).
  TopicView topic(const std::string& name);
  // What is known of a topic the view asks about, without adding it (nullopt: not asked about).
  std::optional<TopicView> find(const std::string& name) const;
  // No sink sends to `topic` any more: it is no longer asked about.
  void forget(const std::string& name);
  // Something looks wrong (librdkafka lost a leader): ask again now.
  void wake();
  // librdkafka cannot reach the partition's leader: its next round asks that leader for it even
  // though it is served, and an answer says when (leader_answered); no answer changes nothing.
  void confirm(const std::string& topic, int32_t partition);
  // When a broker last answered; the brokers it listed then.
  Clock::time_point answered_at() const;
  bool broker_listed(int32_t id) const;

  // One round of questions, on the caller's thread: what the thread does each time (tests call it).
  void refresh();

 private:
  void run();
  bool in_trouble_locked() const;
  // The bound for the next question; none while stopping or too close to finish_by's deadline.
  std::optional<std::chrono::milliseconds> next_question_timeout() const;

  ClusterQuery& query_;
  const Options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool woken_ = false, stopping_ = false;
  Clock::time_point finish_by_ = Clock::time_point::max();
  std::map<std::string, TopicView> topics_;
  std::vector<int32_t> brokers_;
  Clock::time_point answered_at_{};
  std::thread thread_;
};

}  // namespace sluice::kafka
