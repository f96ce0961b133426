// The reload plan, case by case: from the running file and the new one alone, what stays as it
// runs, what stops, and which channel replaces which.

#include <catch2/catch.hpp>

#include "agent/config/properties_file.h"
#include "agent/reload_plan.h"

using namespace sluice;

namespace {

config::AgentConfig parse_agent(const std::string& text) {
  return config::assemble(config::parse_properties(text, "test.properties"), "a", "test.properties");
}

// Two sources into a memory channel and a file channel, a sink on each.
const std::string kRunning =
    "a.sources = tcp udp\na.channels = mem disk\na.sinks = k1 k2\n"
    "a.sources.tcp.type = syslogtcp\na.sources.tcp.port = 5140\na.sources.tcp.channels = mem\n"
    "a.sources.udp.type = syslogudp\na.sources.udp.port = 5141\na.sources.udp.channels = mem disk\n"
    "a.channels.mem.type = memory\na.channels.mem.capacity = 1000\n"
    "a.channels.disk.type = file\na.channels.disk.dataDirs = /var/lib/x\n"
    "a.sinks.k1.type = kafka\na.sinks.k1.channel = mem\na.sinks.k1.topic = t\n"
    "a.sinks.k2.type = kafka\na.sinks.k2.channel = disk\na.sinks.k2.topic = t\n";

ReloadPlan plan_to(const std::string& next) { return plan_reload(parse_agent(kRunning), parse_agent(next)); }

std::string replaced(const std::string& text, const std::string& from, const std::string& to) {
  std::string out = text;
  const auto at = out.find(from);
  REQUIRE(at != std::string::npos);
  return out.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("reload plan: the same file, or the same settings written elsewhere with comments, changes nothing",
          "[agent][reload]") {
  CHECK(plan_to(kRunning).unchanged);
  // Lines in another order, a comment: the same settings.
  const std::string moved =
      "# a comment\n" + replaced(kRunning, "a.channels.mem.capacity = 1000\n", "") + "a.channels.mem.capacity = 1000\n";
  const ReloadPlan plan = plan_to(moved);
  CHECK(plan.unchanged);
  CHECK(plan.keep_channel == std::vector<bool>{true, true});
}

TEST_CASE("reload plan: a channel's setting changed replaces it, and the sources and sinks on it", "[agent][reload]") {
  const ReloadPlan plan = plan_to(replaced(kRunning, "capacity = 1000", "capacity = 2000"));
  CHECK_FALSE(plan.unchanged);
  CHECK(plan.keep_channel == std::vector<bool>{false, true});
  CHECK(plan.successor[0] == std::optional<size_t>(0));        // mem, by mem of the new file
  CHECK(plan.successor[1] == std::nullopt);                    // kept
  CHECK(plan.keep_source == std::vector<bool>{false, false});  // both feed mem
  CHECK(plan.keep_sink == std::vector<bool>{false, true});     // k1 drains mem
  CHECK(plan.summary ==
        "keeping sources [-] channels [disk] sinks [k2]; stopping sources [tcp udp] channels [mem] sinks [k1] "
        "(changed or removed)");
}

TEST_CASE("reload plan: a sink's or a source's setting changed stops that one alone", "[agent][reload]") {
  const ReloadPlan sink = plan_to(replaced(kRunning, "a.sinks.k2.topic = t", "a.sinks.k2.topic = u"));
  CHECK(sink.keep_sink == std::vector<bool>{true, false});
  CHECK(sink.keep_channel == std::vector<bool>{true, true});
  CHECK(sink.keep_source == std::vector<bool>{true, true});
  const ReloadPlan source = plan_to(replaced(kRunning, "port = 5141", "port = 5142"));
  CHECK(source.keep_source == std::vector<bool>{true, false});
  CHECK(source.keep_sink == std::vector<bool>{true, true});
}

TEST_CASE("reload plan: a channel removed has no successor, and a source moved to another channel is rebuilt",
          "[agent][reload]") {
  std::string next = replaced(kRunning, "a.channels = mem disk", "a.channels = mem");
  next = replaced(next, "a.channels.disk.type = file\na.channels.disk.dataDirs = /var/lib/x\n", "");
  next = replaced(next, "a.sinks = k1 k2", "a.sinks = k1");
  next = replaced(next, "a.sinks.k2.type = kafka\na.sinks.k2.channel = disk\na.sinks.k2.topic = t\n", "");
  next = replaced(next, "a.sources.udp.channels = mem disk", "a.sources.udp.channels = mem");
  const ReloadPlan plan = plan_to(next);
  CHECK(plan.keep_channel == std::vector<bool>{true, false});
  CHECK(plan.successor[1] == std::nullopt);  // removed
  CHECK(plan.keep_sink == std::vector<bool>{true, false});
  CHECK(plan.keep_source == std::vector<bool>{true, false});  // its channels changed
}

TEST_CASE("reload plan: a component added keeps every running one but is not unchanged", "[agent][reload]") {
  const std::string next = replaced(kRunning, "a.sources = tcp udp", "a.sources = tcp udp relp") +
                           "a.sources.relp.type = relp\na.sources.relp.port = 2514\na.sources.relp.channels = disk\n";
  const ReloadPlan plan = plan_to(next);
  CHECK_FALSE(plan.unchanged);
  CHECK(plan.keep_source == std::vector<bool>{true, true});
  CHECK(plan.keep_channel == std::vector<bool>{true, true});
  CHECK(plan.keep_sink == std::vector<bool>{true, true});
}

TEST_CASE("reload plan: a component whose type changed under the same name is replaced", "[agent][reload]") {
  const ReloadPlan plan =
      plan_to(replaced(kRunning, "a.channels.mem.type = memory", "a.channels.mem.type = spillablememory"));
  CHECK(plan.keep_channel == std::vector<bool>{false, true});
  CHECK(plan.successor[0] == std::optional<size_t>(0));
}

TEST_CASE("reload plan: a sink group added, changed or removed rebuilds its sinks, and only those",
          "[agent][reload][sinkgroups]") {
  const std::string grouped = kRunning +
                              "a.sinkgroups = g\na.sinkgroups.g.sinks = k1 k2\n"
                              "a.sinkgroups.g.processor.type = failover\na.sinkgroups.g.processor.priority.k1 = 5\n";
  ReloadPlan added = plan_to(grouped);
  CHECK(added.keep_sink == std::vector<bool>{false, false});
  CHECK(added.keep_source == std::vector<bool>{true, true});
  CHECK(plan_reload(parse_agent(grouped), parse_agent(grouped)).unchanged);
  ReloadPlan changed =
      plan_reload(parse_agent(grouped), parse_agent(replaced(grouped, "priority.k1 = 5", "priority.k1 = 1")));
  CHECK(changed.keep_sink == std::vector<bool>{false, false});
  CHECK(changed.keep_channel == std::vector<bool>{true, true});
  ReloadPlan smaller =
      plan_reload(parse_agent(grouped), parse_agent(replaced(grouped, "g.sinks = k1 k2", "g.sinks = k1")));
  CHECK(smaller.keep_sink == std::vector<bool>{false, false});  // k2 leaves the group: it runs alone now
  ReloadPlan removed = plan_reload(parse_agent(grouped), parse_agent(kRunning));
  CHECK(removed.keep_sink == std::vector<bool>{false, false});
}

TEST_CASE("reload plan: one sink of a group changed rebuilds every sink of the group", "[agent][reload][sinkgroups]") {
  const std::string grouped = kRunning +
                              "a.sinkgroups = g\na.sinkgroups.g.sinks = k1 k2\n"
                              "a.sinkgroups.g.processor.type = load_balance\n";
  const ReloadPlan plan =
      plan_reload(parse_agent(grouped), parse_agent(replaced(grouped, "k1.topic = t", "k1.topic = u")));
  CHECK(plan.keep_sink == std::vector<bool>{false, false});
}

TEST_CASE(
    "reload plan: a stopping sink drains a replaced channel, drains a removed one in the background, or "
    "settles beside its kept channel",
    "[agent][reload]") {
  using F = SinkFate;
  CHECK(plan_to(kRunning).sink_fate == std::vector<F>{F::kept, F::kept});
  CHECK(plan_to(replaced(kRunning, "capacity = 1000", "capacity = 2000")).sink_fate ==
        std::vector<F>{F::drains_then_stops, F::kept});
  CHECK(plan_to(replaced(kRunning, "a.sinks.k1.topic = t", "a.sinks.k1.topic = u")).sink_fate ==
        std::vector<F>{F::retires, F::kept});
  std::string removed = replaced(kRunning, "a.channels = mem disk", "a.channels = mem");
  removed = replaced(removed, "a.channels.disk.type = file\na.channels.disk.dataDirs = /var/lib/x\n", "");
  removed = replaced(removed, "a.sinks = k1 k2", "a.sinks = k1");
  removed = replaced(removed, "a.sinks.k2.type = kafka\na.sinks.k2.channel = disk\na.sinks.k2.topic = t\n", "");
  removed = replaced(removed, "a.sources.udp.channels = mem disk", "a.sources.udp.channels = mem");
  CHECK(plan_to(removed).sink_fate == std::vector<F>{F::kept, F::drains_in_background});
}

TEST_CASE("reload plan: what is built, and which running sink goes on if its new one cannot start", "[agent][reload]") {
  const ReloadPlan sink = plan_to(replaced(kRunning, "a.sinks.k1.topic = t", "a.sinks.k1.topic = u"));
  CHECK(sink.build_sink == std::vector<bool>{true, false});
  CHECK(sink.build_channel == std::vector<bool>{false, false});
  CHECK(sink.build_source == std::vector<bool>{false, false});
  CHECK(sink.fallback == std::vector<std::optional<size_t>>{0, std::nullopt});  // k1 as it ran
  // Its channel replaced: the running k1 drains the old one and stops; nothing to fall back to.
  const ReloadPlan channel = plan_to(replaced(kRunning, "capacity = 1000", "capacity = 2000"));
  CHECK(channel.build_channel == std::vector<bool>{true, false});
  CHECK(channel.build_sink == std::vector<bool>{true, false});
  CHECK(channel.build_source == std::vector<bool>{true, true});
  CHECK(channel.fallback == std::vector<std::optional<size_t>>{std::nullopt, std::nullopt});
  // Moved to another channel that stays: it would drain the wrong one.
  const ReloadPlan moved = plan_to(replaced(kRunning, "a.sinks.k2.channel = disk", "a.sinks.k2.channel = mem"));
  CHECK(moved.fallback == std::vector<std::optional<size_t>>{std::nullopt, std::nullopt});
  CHECK(moved.rebuilt_groups.empty());
}

TEST_CASE("reload plan: a new sink that did not start falls back alone, or takes its rebuilt group back whole",
          "[agent][reload][sinkgroups]") {
  const std::string grouped = kRunning +
                              "a.sinkgroups = g\na.sinkgroups.g.sinks = k1 k2\n"
                              "a.sinkgroups.g.processor.type = failover\n";
  const config::AgentConfig running = parse_agent(grouped);
  SECTION("a sink alone: its predecessor goes on, nothing else changes") {
    const config::AgentConfig next = parse_agent(replaced(kRunning, "a.sinks.k1.topic = t", "a.sinks.k1.topic = u"));
    const ReloadPlan plan = plan_reload(parse_agent(kRunning), next);
    const SinkFallback f = plan_sink_fallback(plan, parse_agent(kRunning), next, {0});
    CHECK(f.fall_back == std::set<size_t>{0});
    CHECK(f.stop_again.empty());
    CHECK(f.groups.empty());
    CHECK(f.keep_sink == std::vector<bool>{true, true});
    CHECK(plan_sink_fallback(plan, parse_agent(kRunning), next, {}).keep_sink == std::vector<bool>{false, true});
  }
  SECTION("a group changed: its other new sink stops again, the group runs as it was") {
    const config::AgentConfig next = parse_agent(replaced(grouped, "a.sinks.k1.topic = t", "a.sinks.k1.topic = u"));
    const ReloadPlan plan = plan_reload(running, next);
    CHECK(plan.rebuilt_groups == std::set<std::string>{"g"});
    const SinkFallback f = plan_sink_fallback(plan, running, next, {0});
    CHECK(f.stop_again == std::set<size_t>{1});
    CHECK(f.fall_back == std::set<size_t>{0, 1});
    CHECK(f.keep_sink == std::vector<bool>{true, true});
    REQUIRE(f.groups.size() == 1);
    CHECK(f.groups[0].name == "g");
    CHECK(f.groups[0].previous == std::optional<size_t>(0));
    CHECK(f.groups[0].leaving.empty());
  }
  SECTION("a member that cannot go on as it ran is never chosen again") {
    // k2 moves to mem: its running self drains disk, not what the group now sends it.
    std::string next_text = replaced(grouped, "a.sinks.k1.topic = t", "a.sinks.k1.topic = u");
    next_text = replaced(next_text, "a.sinks.k2.channel = disk", "a.sinks.k2.channel = mem");
    const config::AgentConfig next = parse_agent(next_text);
    const SinkFallback f = plan_sink_fallback(plan_reload(running, next), running, next, {0});
    CHECK(f.keep_sink == std::vector<bool>{true, false});
    REQUIRE(f.groups.size() == 1);
    CHECK(f.groups[0].leaving == std::vector<size_t>{1});
  }
  SECTION("a group new in this reload is left out") {
    const config::AgentConfig next = parse_agent(grouped);
    const ReloadPlan plan = plan_reload(parse_agent(kRunning), next);
    const SinkFallback f = plan_sink_fallback(plan, parse_agent(kRunning), next, {1});
    REQUIRE(f.groups.size() == 1);
    CHECK(f.groups[0].previous == std::nullopt);
    CHECK(f.stop_again == std::set<size_t>{0});
    CHECK(f.keep_sink == std::vector<bool>{true, true});  // both run on alone, as before
  }
}

TEST_CASE("reload plan: a sink moved between two groups that both fall back is chosen again in the group it ran in",
          "[agent][reload][sinkgroups]") {
  const std::string three = kRunning + "a.sinks.k3.type = kafka\na.sinks.k3.channel = mem\na.sinks.k3.topic = t\n";
  const std::string running_text = replaced(three, "a.sinks = k1 k2", "a.sinks = k1 k2 k3") +
                                   "a.sinkgroups = ga gb\na.sinkgroups.ga.sinks = k1 k2\n"
                                   "a.sinkgroups.ga.processor.type = failover\na.sinkgroups.gb.sinks = k3\n"
                                   "a.sinkgroups.gb.processor.type = failover\n";
  std::string next_text = replaced(running_text, "ga.sinks = k1 k2", "ga.sinks = k1");
  next_text = replaced(next_text, "gb.sinks = k3", "gb.sinks = k2 k3");
  const config::AgentConfig running = parse_agent(running_text), next = parse_agent(next_text);
  const ReloadPlan plan = plan_reload(running, next);
  CHECK(plan.rebuilt_groups == std::set<std::string>{"ga", "gb"});
  // k1 and k3 do not start: both groups keep their previous settings, and k2 goes on as it ran,
  // in ga, where it is still a member to choose.
  const SinkFallback f = plan_sink_fallback(plan, running, next, {0, 2});
  CHECK(f.keep_sink == std::vector<bool>{true, true, true});
  REQUIRE(f.groups.size() == 2);
  CHECK(f.groups[0].leaving.empty());
  CHECK(f.groups[1].leaving.empty());
}
