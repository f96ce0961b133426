// Flume's sink processors as gates (sink_processors.cc): who may take, when a failed sink is set
// aside and for how long, when it is back; on a clock the test moves.

#include <catch2/catch.hpp>

#include "sink_processors/sink_processors.h"
#include "tests/support/component.h"

using namespace sluice;
using namespace std::chrono_literals;
using Catch::Contains;

namespace {

config::ComponentConfig group(const std::string& type, std::map<std::string, std::string> properties,
                              std::vector<std::string> sinks = {"k1", "k2", "k3"}) {
  config::ComponentConfig c = test::component(config::Kind::sink_group, "g", type, properties);
  c.key_prefix = "a.sinkgroups.g.processor";
  c.channels = std::move(sinks);
  return c;
}

std::shared_ptr<SinkGroup> make(const ComponentSpec& spec, std::map<std::string, std::string> properties,
                                std::vector<std::string> sinks = {"k1", "k2", "k3"}) {
  return spec.make_sink_group(group(std::string(spec.type), std::move(properties), std::move(sinks)));
}

std::string processor_refusal(const ComponentSpec& spec, std::map<std::string, std::string> properties,
                              std::vector<std::string> sinks = {"k1", "k2", "k3"}) {
  try {
    make(spec, std::move(properties), std::move(sinks));
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

// Which members may take at `now`.
std::vector<bool> takers(SinkGroup& g, Clock::time_point now, size_t members = 3) {
  std::vector<bool> out;
  for (size_t i = 0; i < members; ++i) out.push_back(g.may_take(i, now));
  return out;
}

const Clock::time_point t0 = Clock::now();

}  // namespace

TEST_CASE(
    "failover: the highest priority takes, a failed one is set aside 2 s then 4 s, and is back once it "
    "delivers",
    "[sink_processors]") {
  const auto g = make(sink_processors::kFailoverProcessorSpec, {{"priority.k1", "10"}, {"priority.k2", "5"}});
  CHECK(takers(*g, t0) == std::vector<bool>{true, false, false});
  g->settled(0, false, t0);  // k1's take failed: k2 takes over
  CHECK(takers(*g, t0 + 1s) == std::vector<bool>{false, true, false});
  g->settled(0, false, t0 + 1s);  // another of k1's takes in flight before: not a new failure
  CHECK(!g->may_take(0, t0 + 1999ms));
  CHECK(g->may_take(0, t0 + 2s));   // its penalty served: one take to try
  CHECK(!g->may_take(0, t0 + 2s));  // only one
  g->settled(0, false, t0 + 3s);    // failed again: 4 s
  CHECK(!g->may_take(0, t0 + 6999ms));
  CHECK(g->may_take(0, t0 + 7s));
  g->took_nothing(0);  // nothing to try with: it may try again
  CHECK(g->may_take(0, t0 + 7s));
  g->settled(0, true, t0 + 8s);  // delivered: live, and the preferred one again
  CHECK(takers(*g, t0 + 8s) == std::vector<bool>{true, false, false});
  g->settled(1, true, t0 + 8s);  // k2's last take settles: changes nothing
  CHECK(takers(*g, t0 + 8s) == std::vector<bool>{true, false, false});
}

TEST_CASE("failover: sinks without a priority come after, in list order, and the penalty stops at maxpenalty",
          "[sink_processors]") {
  const auto g = make(sink_processors::kFailoverProcessorSpec, {{"priority.k3", "-7"}, {"maxpenalty", "3000"}});
  CHECK(takers(*g, t0) == std::vector<bool>{false, false, true});
  g->settled(2, false, t0);
  CHECK(takers(*g, t0) == std::vector<bool>{true, false, false});
  g->settled(0, false, t0);
  CHECK(takers(*g, t0) == std::vector<bool>{false, true, false});
  g->settled(1, false, t0);  // every sink set aside: none takes until a penalty is served
  CHECK(takers(*g, t0 + 1s) == std::vector<bool>{false, false, false});
  for (int retry = 0; retry < 5; ++retry) {  // k3's retries keep failing: 4 s would exceed 3 s
    const Clock::time_point at = t0 + std::chrono::seconds(3 * retry + 3);
    REQUIRE(g->may_take(2, at));
    g->settled(2, false, at);
  }
  CHECK(!g->may_take(2, t0 + 17999ms));
  CHECK(g->may_take(2, t0 + 18s));
}

TEST_CASE("load_balance: every sink takes, and with backoff a failing one is set aside until maxTimeOut at most",
          "[sink_processors]") {
  const auto plain = make(sink_processors::kLoadBalanceProcessorSpec, {{"selector", "RANDOM"}});
  plain->settled(1, false, t0);
  CHECK(takers(*plain, t0) == std::vector<bool>{true, true, true});  // no backoff: it keeps taking

  const auto g =
      make(sink_processors::kLoadBalanceProcessorSpec, {{"backoff", "true"}, {"selector.maxTimeOut", "5000"}});
  g->settled(1, false, t0);
  CHECK(takers(*g, t0 + 1999ms) == std::vector<bool>{true, false, true});
  g->settled(1, false, t0 + 1s);  // a take from before: not counted
  CHECK(g->may_take(1, t0 + 2s));
  g->settled(1, false, t0 + 2s);  // 4 s
  CHECK(!g->may_take(1, t0 + 5999ms));
  g->settled(1, false, t0 + 6s);  // 8 s, capped at 5 s
  CHECK(!g->may_take(1, t0 + 10999ms));
  CHECK(g->may_take(1, t0 + 11s));
  g->settled(1, true, t0 + 11s);
  g->settled(1, false, t0 + 12s);  // after a delivery, 2 s again
  CHECK(g->may_take(1, t0 + 14s));
}

TEST_CASE("what a sink group's processor refuses, naming the key", "[sink_processors]") {
  CHECK_THAT(processor_refusal(sink_processors::kFailoverProcessorSpec, {{"priority.k1", "5"}, {"priority.k2", "5"}}),
             Contains("a.sinkgroups.g.processor.priority.k2") && Contains("share priority 5"));
  CHECK_THAT(processor_refusal(sink_processors::kFailoverProcessorSpec, {{"priority.k9", "5"}}),
             Contains("a.sinkgroups.g.processor.priority.k9") && Contains("not one of the group's sinks"));
  CHECK_THAT(processor_refusal(sink_processors::kFailoverProcessorSpec, {{"priority.k1", "high"}}),
             Contains("a.sinkgroups.g.processor.priority.k1"));
  CHECK_THAT(processor_refusal(sink_processors::kFailoverProcessorSpec, {{"maxPenalty", "5"}}),
             Contains("a.sinkgroups.g.processor.maxPenalty"));
  CHECK_THAT(processor_refusal(sink_processors::kLoadBalanceProcessorSpec, {{"selector", "com.example.Mine"}}),
             Contains("a.sinkgroups.g.processor.selector") && Contains("custom selector classes"));
  CHECK_THAT(processor_refusal(sink_processors::kDefaultProcessorSpec, {}),
             Contains("choose failover or load_balance"));
  CHECK(processor_refusal(sink_processors::kDefaultProcessorSpec, {}, {"k1"}).empty());
  CHECK(make(sink_processors::kDefaultProcessorSpec, {}, {"k1"}) == nullptr);  // a sink alone
}

TEST_CASE(
    "failover: only the retry's take brings a set-aside sink back, one that left is never chosen, a dissolved "
    "group lets every sink take",
    "[sink_processors]") {
  const auto g = make(sink_processors::kFailoverProcessorSpec, {{"priority.k1", "3"}, {"priority.k2", "2"}});
  g->settled(0, false, t0);
  g->settled(0, true, t0 + 1s);  // a take from before it was set aside, delivered late: proves nothing
  CHECK(takers(*g, t0 + 1s) == std::vector<bool>{false, true, false});
  g->leave(1);  // k2 did not start at a reload: k3 takes
  CHECK(takers(*g, t0 + 1s) == std::vector<bool>{false, false, true});
  g->settled(1, false, t0 + 1s);  // nothing it says counts
  CHECK(!g->may_take(1, t0 + 60s));
  g->dissolve();
  CHECK(takers(*g, t0 + 1s) == std::vector<bool>{true, true, true});
}
