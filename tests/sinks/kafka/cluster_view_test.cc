// The cluster view against a fake cluster: what it says of topics and partitions, and when a
// partition counts as served.

#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <set>

#include "sinks/kafka/cluster_view.h"
#include "tests/support/eventually.h"

using namespace sluice;
using namespace sluice::kafka;
using namespace std::chrono_literals;

namespace {

// A cluster whose answers the test sets: topics with their leaders, leaders that answer or not.
struct FakeCluster final : ClusterQuery {
  std::mutex mutex;
  bool up = true;
  std::map<std::string, TopicMetadata> topics;
  std::map<std::pair<std::string, int32_t>, std::string> leader_refuses;  // (topic, partition) → why
  std::set<int32_t> silent_leaders;                                       // time out
  int asked_leaders = 0;
  int asked_metadata = 0;
  std::vector<std::chrono::milliseconds> timeouts;  // each question's bound, in the order asked

  ClusterMetadata metadata(const std::vector<std::string>& wanted, std::chrono::milliseconds timeout) override {
    std::lock_guard lock(mutex);
    ++asked_metadata;
    timeouts.push_back(timeout);
    ClusterMetadata md;
    if (!up) {
      md.error = "Local: Broker transport failure";
      return md;
    }
    md.answered = true;
    md.brokers = {1, 2};
    for (const std::string& name : wanted) {
      const auto it = topics.find(name);
      md.topics.push_back(it != topics.end() ? it->second : TopicMetadata{.topic = name, .error = 3});
    }
    return md;
  }
  LeaderAnswer ask_leader(const std::string& topic, int32_t partition, std::chrono::milliseconds timeout) override {
    std::lock_guard lock(mutex);
    ++asked_leaders;
    timeouts.push_back(timeout);
    const auto t = topics.find(topic);
    if (t != topics.end() && silent_leaders.count(t->second.leaders.at(static_cast<size_t>(partition))))
      return {"Local: Timed out", true};
    const auto it = leader_refuses.find({topic, partition});
    return it == leader_refuses.end() ? LeaderAnswer{} : LeaderAnswer{it->second, false};
  }
};

}  // namespace

TEST_CASE("cluster view: a partition is served once its leader answers for it, and not before", "[kafka][view]") {
  FakeCluster cluster;
  cluster.topics["logs"] = {.topic = "logs", .leaders = {1, 2, -1}};
  cluster.leader_refuses[{"logs", 1}] = "Broker: Not leader for partition";
  ClusterView view(cluster, {});
  CHECK(view.topic("logs").known == TopicView::Known::not_yet);  // not asked yet
  view.refresh();
  const TopicView t = view.topic("logs");
  REQUIRE(t.known == TopicView::Known::exists);
  CHECK(t.partition_count() == 3);
  CHECK(t.served(0));
  CHECK_FALSE(t.served(1));  // its leader does not serve it yet (a topic just created)
  CHECK_FALSE(t.served(2));  // no leader
  CHECK(t.leader(2) == -1);
  CHECK_FALSE(t.served(3));  // no such partition
  CHECK_THAT(t.problem, Catch::Contains("partition 2 of logs has no leader"));
  cluster.leader_refuses.clear();
  view.refresh();
  CHECK(view.topic("logs").served(1));
}

TEST_CASE("cluster view: a served partition is not asked again while its leader stays, a new leader is",
          "[kafka][view]") {
  FakeCluster cluster;
  cluster.topics["logs"] = {.topic = "logs", .leaders = {1}};
  ClusterView view(cluster, {});
  view.topic("logs");
  view.refresh();
  view.refresh();
  CHECK(cluster.asked_leaders == 1);
  cluster.topics["logs"].leaders = {2};
  cluster.leader_refuses[{"logs", 0}] = "Broker: Unknown topic or partition";
  view.refresh();
  CHECK_FALSE(view.topic("logs").served(0));
  CHECK(view.topic("logs").leader(0) == 2);
  CHECK(cluster.asked_leaders == 2);
}

TEST_CASE(
    "cluster view: a served partition asked to be confirmed is asked once more: an answer says when, silence or a "
    "refusal leaves it served",
    "[kafka][view]") {
  FakeCluster cluster;
  cluster.topics["logs"] = {.topic = "logs", .leaders = {1, 2}};
  ClusterView view(cluster, {});
  view.topic("logs");
  const auto before = Clock::now();
  view.refresh();
  CHECK(cluster.asked_leaders == 2);
  const auto first = view.topic("logs").leader_answered(0), other = view.topic("logs").leader_answered(1);
  CHECK(first >= before);
  view.confirm("logs", 0);
  view.confirm("logs", 7);   // no such partition: nothing
  view.confirm("audit", 0);  // no such topic: nothing
  view.refresh();
  CHECK(cluster.asked_leaders == 3);                      // partition 0 only
  CHECK(view.topic("logs").leader_answered(0) > first);   // asked again, answered again
  CHECK(view.topic("logs").leader_answered(1) == other);  // not asked again
  view.refresh();
  CHECK(cluster.asked_leaders == 3);  // asked once per confirm()
  // Leader 1 silent, then refusing: the partition stays served (the producer sees its own outage), and
  // the time of the last answer stays.
  const auto answered = view.topic("logs").leader_answered(0);
  cluster.silent_leaders = {1};
  view.confirm("logs", 0);
  view.refresh();
  CHECK(cluster.asked_leaders == 4);
  CHECK(view.topic("logs").served(0));
  CHECK(view.topic("logs").leader_answered(0) == answered);
  cluster.silent_leaders.clear();
  cluster.leader_refuses[{"logs", 0}] = "Broker: Not leader for partition";
  view.confirm("logs", 0);
  view.refresh();
  CHECK(view.topic("logs").served(0));
  CHECK(view.topic("logs").leader_answered(0) == answered);
  CHECK(view.topic("logs").problem.empty());
  // A new leader: the confirmation goes with the old one; the new one is asked as any new leader is.
  cluster.leader_refuses.clear();
  view.confirm("logs", 0);
  cluster.topics["logs"].leaders = {3, 2};
  view.refresh();
  CHECK(view.topic("logs").leader(0) == 3);
  CHECK(view.topic("logs").served(0));
  CHECK(view.topic("logs").leader_answered(0) > answered);
  CHECK(cluster.asked_leaders == 6);
}

TEST_CASE("cluster view: a missing topic, a refused one, and a cluster that does not answer", "[kafka][view]") {
  FakeCluster cluster;
  cluster.topics["bad"] = {.topic = "bad", .error = 17};
  cluster.topics["logs"] = {.topic = "logs", .leaders = {1}};
  ClusterView view(cluster, {});
  for (const char* name : {"gone", "bad", "logs"}) view.topic(name);
  view.refresh();
  CHECK(view.topic("gone").known == TopicView::Known::not_yet);  // not listed once: asked again
  view.refresh();
  CHECK(view.topic("gone").known == TopicView::Known::missing);  // twice in a row: missing
  CHECK(view.topic("bad").known == TopicView::Known::refused);
  CHECK(view.topic("bad").error == 17);
  REQUIRE(view.topic("logs").served(0));
  const auto answered = view.answered_at();
  CHECK(view.broker_listed(2));
  // No broker answers: what was known stays (an outage is the producer's to see), nothing new is.
  cluster.up = false;
  view.topic("later");
  view.refresh();
  CHECK(view.topic("logs").served(0));
  CHECK(view.answered_at() == answered);
  CHECK(view.topic("later").known == TopicView::Known::not_yet);
  CHECK_THAT(view.topic("later").problem, Catch::Contains("no broker answered"));
}

TEST_CASE(
    "cluster view: a leader that does not answer is asked once a round, one that refuses a partition is asked "
    "for the others",
    "[kafka][view]") {
  FakeCluster cluster;
  cluster.topics["wide"] = {.topic = "wide", .leaders = {3, 3, 3, 3, 1, 2, 2}};
  cluster.silent_leaders = {3};
  cluster.leader_refuses[{"wide", 5}] = "Broker: Not leader for partition";
  ClusterView view(cluster, {});
  view.topic("wide");
  view.refresh();
  CHECK(cluster.asked_leaders == 4);  // broker 3 once (silent), broker 1 once, broker 2 for both
  const TopicView t = view.topic("wide");
  CHECK(t.served(4));
  CHECK_FALSE(t.served(0));
  CHECK_FALSE(t.served(5));
  CHECK(t.served(6));
}

TEST_CASE("cluster view: a topic it knew that one answer does not list stays as it was until a second",
          "[kafka][view]") {
  FakeCluster cluster;
  cluster.topics["logs"] = {.topic = "logs", .leaders = {1}};
  ClusterView view(cluster, {});
  view.topic("logs");
  view.refresh();
  REQUIRE(view.topic("logs").served(0));
  cluster.topics.erase("logs");  // a lagging broker's answer
  view.refresh();
  CHECK(view.topic("logs").served(0));
  cluster.topics["logs"] = {.topic = "logs", .leaders = {1}};  // listed again: the count starts over
  view.refresh();
  cluster.topics.erase("logs");
  view.refresh();
  CHECK(view.topic("logs").known == TopicView::Known::exists);
  view.refresh();
  CHECK(view.topic("logs").known == TopicView::Known::missing);
}

TEST_CASE("cluster view: its thread asks at once for a new topic and stops within a question's time", "[kafka][view]") {
  FakeCluster cluster;
  cluster.topics["logs"] = {.topic = "logs", .leaders = {1}};
  ClusterView view(cluster, {.steady_interval = 60s, .trouble_interval = 60s, .timeout = 1s});
  view.start();
  view.topic("logs");
  CHECK(test::eventually([&] { return view.topic("logs").served(0); }, 10s));
  const auto t0 = Clock::now();
  view.stop();
  CHECK(Clock::now() - t0 < 2s);
}

TEST_CASE(
    "cluster view: a stop's deadline bounds its questions: each waits at most the time left, none is asked once too "
    "little is left",
    "[kafka][view]") {
  FakeCluster cluster;
  cluster.topics["logs"] = {.topic = "logs", .leaders = {1, 2}};
  ClusterView view(cluster, {.timeout = 2s});
  view.topic("logs");
  view.refresh();
  CHECK(cluster.timeouts == std::vector<std::chrono::milliseconds>{2s, 2s, 2s});  // no stop coming: the full bound
  cluster.timeouts.clear();
  cluster.topics["logs"].leaders = {2, 1};  // new leaders: both asked again
  view.finish_by(Clock::now() + 1s);
  view.finish_by(Clock::now() + 10s);  // a later deadline does not undo an earlier one
  view.refresh();
  REQUIRE(cluster.timeouts.size() == 3);  // the metadata, then each partition's new leader
  for (const auto timeout : cluster.timeouts) {
    CHECK(timeout <= 1s);
    CHECK(timeout >= ClusterView::kShortestQuestion);
  }
  CHECK(view.topic("logs").served(0));
  // Too little left for a question: none is asked, and what was known stays.
  cluster.timeouts.clear();
  cluster.topics["logs"].leaders = {1, 2};
  view.finish_by(Clock::now() + ClusterView::kShortestQuestion / 2);
  view.refresh();
  CHECK(cluster.timeouts.empty());
  CHECK(view.topic("logs").leader(0) == 2);
  CHECK(view.topic("logs").served(0));
}

TEST_CASE("cluster view: a topic the cluster lacks is asked about often only for a while, then as steadily as the rest",
          "[kafka][view]") {
  FakeCluster cluster;
  cluster.topics["logs"] = {.topic = "logs", .leaders = {1}};
  ClusterView view(cluster,
                   {.steady_interval = 60s, .trouble_interval = 10ms, .missing_patience = 500ms, .timeout = 1s});
  view.start();
  view.topic("logs");
  view.topic("nowhere");  // named by an event, say; the cluster does not have it
  const auto wanted = Clock::now();
  REQUIRE(test::eventually([&] { return view.topic("nowhere").known == TopicView::Known::missing; }, 10s));
  const auto asked = [&] {
    std::lock_guard lock(cluster.mutex);
    return cluster.asked_metadata;
  };
  CHECK(asked() >= 2);
  // Past its patience (a deadline, not a synchronisation): the view goes back to its steady pace.
  std::this_thread::sleep_until(wanted + 600ms);
  const int after_patience = asked();
  std::this_thread::sleep_for(300ms);  // thirty trouble intervals
  CHECK(asked() <= after_patience + 1);
  view.stop();
}
