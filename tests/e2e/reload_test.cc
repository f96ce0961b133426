// Reload (SIGHUP, systemctl reload, --watch-config) of a running agent: what changed is applied,
// what did not keeps running (its connections, its channel's contents), a file that does not
// validate is refused and changes nothing, and no event is lost or duplicated on the way.

#include <signal.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>

#include "loadgen/event_template.h"
#include "sinks/kafka/topic_reader.h"
#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"
#include "tests/support/summary_json.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

// Lines that keep a sink's producer from being made: valid as a file (--check passes it), but
// librdkafka refuses a CA file that is not there.
std::string unstartable_producer(const std::string& sink) {
  return "t.sinks." + sink + ".kafka.producer.security.protocol = ssl\n" + "t.sinks." + sink +
         ".kafka.producer.ssl.ca.location = /nonexistent/ca.pem\n";
}

// `config` (a ten_sink_config) with a second source, r2, on a free port into the same channel.
std::string with_second_source(const std::string& config) {
  return std::regex_replace(config, std::regex("t\\.sources = r1\n"), "t.sources = r1 r2\n") +
         "t.sources.r2.type = syslogtcp\nt.sources.r2.host = 127.0.0.1\nt.sources.r2.port = 0\n"
         "t.sources.r2.channels = c1\n";
}

// Keeps the summary of the send just made as `name`: the next send writes sent.json again, and
// the verifier is to know every send's connections (each its own: --first-connection).
std::string keep_summary(const Pipeline& p, const std::string& name) {
  const std::string path = p.dir().file(name);
  std::ofstream(path) << read_file(p.dir().file("sent.json"));
  return path;
}

// The verifier's verdict on what Kafka holds: each of the load generator's `events` once, by
// connection and sequence number (a total could hide one event lost and another stored twice).
// The last send's summary is sent.json; `earlier_summaries` are those of the sends before it.
void check_every_event_once(Pipeline& p, uint64_t events, const std::vector<std::string>& earlier_summaries = {}) {
  std::vector<std::string> expect;
  for (const std::string& summary : earlier_summaries) expect.insert(expect.end(), {"--expect", summary});
  std::string report;
  const int verified = p.verify(report, "", expect);
  INFO(report);
  CHECK(verified == 0);
  CHECK_THAT(report, Catch::Contains("unique " + std::to_string(events) + ", duplicates 0, missing 0"));
}

}  // namespace

TEST_CASE(
    "reloads while 100,000 events flow: sinks reconfigured, a source added, a broken file refused, and "
    "every event once with the senders' connections kept",
    "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const std::string base = ten_sink_config(p.bootstrap(), kAcksAll);
  p.start_agent(base, "t", {"--metrics", "127.0.0.1:0"});
  const std::string ports = ready_ports(p, "r1");
  int sent = -1;
  // 10 s at 10,000 events/s over 4 connections: the reloads happen while it sends.
  TestThread sender([&] { sent = p.send({"-c", "4", "-n", "100000", "-r", "10000", "-d", "60s"}); });
  REQUIRE(eventually([&] { return p.metric("sluice_source_events_received_total") > 20000; }, 20s));
  const double accepted = p.metric("sluice_source_connections_accepted_total");

  // Every sink's producer settings change: ten new sinks take over the channel from the old ones.
  const std::string relinger = std::regex_replace(base, std::regex("linger\\.ms = 5"), "linger.ms = 20");
  CHECK(reload_to(p, relinger, "applied"));
  // A second source on a new port; r1 is untouched.
  const std::string added = with_second_source(relinger);
  CHECK(reload_to(p, added, "applied"));
  CHECK(eventually([&] { return !ready_ports(p, "r2").empty(); }, 10s));
  // A file that does not validate: refused with the start's one-line error, nothing changes.
  CHECK(reload_to(p, added + "t.sinks.k3.batchSize = many\n", "refused"));
  CHECK_THAT(p.agent_log(), Catch::Contains("reload refused: ") && Catch::Contains("t.sinks.k3.batchSize") &&
                                Catch::Contains("the running configuration stays"));
  // The same file again: nothing to do.
  CHECK(reload_to(p, added, "unchanged"));
  CHECK(p.metric("sluice_config_last_reload_successful") == 1);
  sender.join();
  REQUIRE(sent == 0);
  // The senders never had to reconnect, and r1 kept its ports.
  CHECK(p.metric("sluice_source_connections_accepted_total") == accepted);
  CHECK(ready_ports(p, "r1") == ports);

  // Events into the source that was added by the reload land too.
  const uint16_t r2 = static_cast<uint16_t>(std::stoi(ready_ports(p, "r2")));
  const int fd = connect_loopback(r2);
  const std::string line = "<13>Dec  2 10:00:00 h app: into r2\n";
  REQUIRE(::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  ::close(fd);
  REQUIRE(eventually([&] { return p.stored() == 100001; }, 30s));

  const auto exit_code = p.stop_agent(60s);
  INFO(p.agent_log());
  CHECK(exit_code == 0);
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.found);
  CHECK(account.balances());
  CHECK(account.lost == 0);
  std::string report;
  p.verify(report);
  INFO(report);
  // The verifier knows the load generator's 100,000; r2's line is one more, not theirs.
  CHECK_THAT(report, Catch::Contains("unique 100000, duplicates 0, missing 0"));
}

TEST_CASE(
    "a memory channel changed while Kafka is down keeps its events: they move into the new channel and "
    "land once Kafka is back",
    "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const std::string base = ten_sink_config(p.bootstrap(), kAcksAll);
  p.start_agent(base, "t", {"--metrics", "127.0.0.1:0", "--shutdown-timeout", "3s"});
  p.wait_until_served();  // then the fault meets what its sinks take
  p.control_broker("down");
  REQUIRE(p.send({"-c", "2", "-n", "20000", "-d", "30s"}) == 0);
  REQUIRE(eventually([&] { return p.metric("sluice_channel_events") == 20000; }, 20s));
  // A bigger channel (and its sinks, whose channel is new): the old sinks cannot drain it in
  // the 3 s they get; what it holds moves over.
  CHECK(reload_to(p, std::regex_replace(base, std::regex("capacity = 60000"), "capacity = 80000"), "applied"));
  CHECK_THAT(p.agent_log(), Catch::Contains("moved into its successor"));
  CHECK(p.metric("sluice_channel_capacity_events") == 80000);
  p.control_broker("up");
  REQUIRE(eventually([&] { return p.stored() == 20000; }, 60s));
  CHECK(p.stop_agent(30s) == 0);
  check_every_event_once(p, 20000);
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.balances());
  CHECK(account.lost == 0);
}

TEST_CASE("with --watch-config a changed file is applied without a signal, and a port removed stops listening",
          "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const std::string two = with_second_source(ten_sink_config(p.bootstrap(), {"acks = 1"}));
  p.start_agent(two, "t", {"--metrics", "127.0.0.1:0", "--watch-config", "--watch-interval", "200ms"});
  const uint16_t r2 = static_cast<uint16_t>(std::stoi(ready_ports(p, "r2")));
  ::close(connect_loopback(r2));
  std::ofstream(p.dir().file("agent.properties")) << ten_sink_config(p.bootstrap(), {"acks = 1"});
  REQUIRE(eventually([&] { return reloads(p, "applied") == 1; }, 20s));
  CHECK(eventually([&] { return ready_ports(p, "r2").empty(); }, 10s));  // rewritten after the count
  CHECK_THROWS(connect_loopback(r2));
  CHECK(p.stop_agent(30s) == 0);
}

TEST_CASE("with --watch-config an edit made while a SIGHUP reload runs is applied after it", "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const std::string one = ten_sink_config(p.bootstrap(), {"acks = 1"});
  p.start_agent(with_second_source(one), "t",
                {"--metrics", "127.0.0.1:0", "--watch-config", "--watch-interval", "200ms"});
  // An idle sender on r2 holds r2's stop for its whole grace (it never sees our FIN): the
  // reload that removes r2 takes seconds, and the second edit comes meanwhile.
  const int idle = connect_loopback(static_cast<uint16_t>(std::stoi(ready_ports(p, "r2"))));
  std::ofstream(p.dir().file("agent.properties")) << one;
  p.agent().signal(SIGHUP);
  REQUIRE(eventually([&] { return p.agent_log().find("reload: keeping sources") != std::string::npos; }, 20s));
  const std::string third = std::regex_replace(one, std::regex("t\\.sources = r1\n"), "t.sources = r1 r3\n") +
                            "t.sources.r3.type = syslogtcp\nt.sources.r3.host = 127.0.0.1\nt.sources.r3.port = 0\n"
                            "t.sources.r3.channels = c1\n";
  std::ofstream(p.dir().file("agent.properties")) << third;
  CHECK(reloads(p, "applied") == 0);  // the first is still running
  // The first reload ends; the watcher finds the file changed since that reload read it.
  CHECK(eventually([&] { return reloads(p, "applied") == 2; }, 30s));
  CHECK(eventually([&] { return !ready_ports(p, "r3").empty(); }, 10s));
  ::close(idle);
  CHECK(p.stop_agent(30s) == 0);
}

TEST_CASE("a sink whose producer cannot be made at reload leaves the running one in place: nothing is lost",
          "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const std::string base = ten_sink_config(p.bootstrap(), {"acks = 1"});
  p.start_agent(base, "t", {"--metrics", "127.0.0.1:0"});
  const std::string broken = base + unstartable_producer("k3");
  CHECK(reload_to(p, broken, "failed"));
  CHECK_THAT(p.agent_log(), Catch::Contains("reload: sink k3 did not start") &&
                                Catch::Contains("sink k3 goes on with its previous settings"));
  CHECK(p.metric("sluice_config_last_reload_successful") == 0);
  REQUIRE(p.send_until_stored(20000, 20000));
  CHECK(p.stop_agent(30s) == 0);
  check_every_event_once(p, 20000);
}

TEST_CASE(
    "a sink removed and another added on a channel that stays, then the channel's type changed while Kafka "
    "is down: every event once",
    "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const std::string base = ten_sink_config(p.bootstrap(), kAcksAll);
  p.start_agent(base, "t", {"--metrics", "127.0.0.1:0", "--shutdown-timeout", "3s"});
  // k9 goes, kx (the same partition) comes: the channel and the other nine sinks stay.
  std::string swapped = std::regex_replace(base, std::regex("k8 k9\n"), "k8 kx\n");
  swapped = std::regex_replace(swapped, std::regex("t\\.sinks\\.k9\\."), "t.sinks.kx.");
  CHECK(reload_to(p, swapped, "applied"));
  CHECK_THAT(p.agent_log(), Catch::Contains("keeping sources [r1] channels [c1] sinks [k0 k1 k2 k3 k4 k5 k6 k7 k8]"));
  REQUIRE(p.send_until_stored(20000, 20000));  // connections 0 and 1
  const std::string first = keep_summary(p, "sent-first.json");

  // Kafka down, 10,000 events held; the memory channel becomes a spillable one.
  p.control_broker("down");
  REQUIRE(p.send({"-c", "2", "-n", "10000", "-d", "30s", "--first-connection", "2"}) == 0);
  REQUIRE(eventually([&] { return p.metric("sluice_channel_events") == 10000; }, 20s));
  const std::string spillable =
      with_channel(swapped,
                   "t.channels.c1.type = spillablememory\nt.channels.c1.memoryCapacity = 60000\n"
                   "t.channels.c1.transactionCapacity = 8000\nt.channels.c1.checkpointDir = " +
                       p.dir().file("checkpoint") + "\nt.channels.c1.dataDirs = " + p.dir().file("data") + "\n");
  CHECK(reload_to(p, spillable, "applied"));
  CHECK_THAT(p.agent_log(), Catch::Contains("10000 events not yet sent moved into its successor"));
  p.control_broker("up");
  REQUIRE(eventually([&] { return p.stored() == 30000; }, 60s));
  CHECK(p.stop_agent(30s) == 0);
  check_every_event_once(p, 30000, {first});
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.balances());
  CHECK(account.lost == 0);
}

TEST_CASE(
    "a source changed while Kafka is down and its channel full drains in the background: nothing dropped, no "
    "connection cut, every event once when Kafka is back",
    "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  // A source rebuilt by the reload listens where the senders reconnect.
  const std::string pinned = with_fixed_ports(ten_sink_config(p.bootstrap(), kAcksAll));
  p.start_agent(pinned, "t", {"--metrics", "127.0.0.1:0", "--shutdown-timeout", "4s"});
  p.wait_until_served();  // then the fault meets what its sinks take
  p.control_broker("down");
  int sent = -1;
  TestThread sender([&] { sent = p.send({"-c", "2", "-n", "100000", "-d", "120s"}, 180s); });
  // The channel full (batches that do not fit wait), the source blocked on it, the senders pushed back.
  REQUIRE(eventually([&] { return p.metric("sluice_channel_events") > 55000; }, 30s));
  REQUIRE(eventually([&] { return p.metric("sluice_channel_put_blocked_seconds_total") > 0.5; }, 30s));
  // The source changes (batchSize): the old one cannot put what it read within the reload's
  // 2 s, and goes on in the background instead of dropping it.
  const std::string changed = std::regex_replace(pinned, std::regex("batchSize = 1000"), "batchSize = 500");
  CHECK(reload_to(p, changed, "applied"));
  CHECK_THAT(p.agent_log(),
             Catch::Contains("is still draining (a full channel or open connections); it goes on in the background"));
  p.control_broker("up");
  sender.join();
  CHECK(sent == 0);
  REQUIRE(eventually([&] { return p.stored() == 100000; }, 60s));
  CHECK(eventually([&] { return p.agent_log().find("has drained and stopped") != std::string::npos; }, 30s));
  CHECK(p.stop_agent(30s) == 0);
  std::string report;
  p.verify(report);
  const std::string summary = read_file(p.dir().file("sent.json"));
  INFO(report << "\nsender: " << summary.substr(0, 300));
  CHECK_THAT(report, Catch::Contains("unique 100000, duplicates 0, missing 0"));
  CHECK(json_count(summary, "possibly_lost") == 0);
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.balances());
  CHECK(account.lost == 0);
  CHECK(account.never_put == 0);
  CHECK(account.connections_cut == 0);
  CHECK(account.unread_bytes == 0);
}

TEST_CASE(
    "a spillable channel moved to another dataDir while Kafka is down takes its events along: a restart on the "
    "new directories delivers every one",
    "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const auto spillable = [&](const std::string& dir) {
    return with_channel(ten_sink_config(p.bootstrap(), kAcksAll),
                        "t.channels.c1.type = spillablememory\nt.channels.c1.memoryCapacity = 10000\n"
                        "t.channels.c1.transactionCapacity = 8000\nt.channels.c1.dataDir = " +
                            p.dir().file(dir) + "\n");
  };
  const std::vector<std::string> args{"--metrics", "127.0.0.1:0", "--shutdown-timeout", "3s"};
  p.start_agent(spillable("first"), "t", args);
  p.wait_until_served();  // then the fault meets what its sinks take
  p.control_broker("down");
  REQUIRE(p.send({"-c", "2", "-n", "30000", "-d", "60s"}) == 0);
  REQUIRE(eventually([&] { return p.metric("sluice_channel_events") == 30000; }, 30s));
  CHECK(reload_to(p, spillable("second"), "applied"));
  INFO(log_lines_with(p.agent_log(), {"reload", "channel", "stopped:"}));
  CHECK_THAT(p.agent_log(), Catch::Contains("30000 events not yet sent moved into its successor"));
  // Stopped with Kafka still down: the events wait on disk, in the directory the file names now.
  REQUIRE(p.stop_agent(30s) == std::optional<int>(0));
  CHECK(shutdown_account(p.agent_log()).kept == 30000);
  p.control_broker("up");
  p.start_agent(spillable("second"), "t", args);
  REQUIRE(eventually([&] { return p.stored() == 30000; }, 60s));
  CHECK(p.stop_agent(30s) == 0);
  check_every_event_once(p, 30000);
}

TEST_CASE(
    "a spillable channel moved back to the dataDir a previous configuration still drains reopens it and replays "
    "it: every event once",
    "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const auto spillable = [&](const std::string& dir, const std::string& sizes) {
    return with_channel(
        ten_sink_config(p.bootstrap(), kAcksAll),
        "t.channels.c1.type = spillablememory\n" + sizes + "t.channels.c1.dataDir = " + p.dir().file(dir) + "\n");
  };
  const std::string large = "t.channels.c1.memoryCapacity = 10000\nt.channels.c1.transactionCapacity = 8000\n";
  // Room for a fifth of what the first holds: the rest stays behind, drained in the background.
  const std::string small =
      "t.channels.c1.memoryCapacity = 1000\nt.channels.c1.overflowCapacity = 5000\n"
      "t.channels.c1.transactionCapacity = 1000\n";
  const std::vector<std::string> args{"--metrics", "127.0.0.1:0", "--shutdown-timeout", "3s"};
  p.start_agent(spillable("first", large), "t", args);
  p.wait_until_served();  // then the fault meets what its sinks take
  p.control_broker("down");
  REQUIRE(p.send({"-c", "2", "-n", "30000", "-d", "60s"}) == 0);
  REQUIRE(eventually([&] { return p.metric("sluice_channel_events") == 30000; }, 30s));
  CHECK(reload_to(p, spillable("second", small), "applied"));
  // Whole records move, as many as the successor's 6,000 have room for: how the sender's events
  // fell into records decides where the last one stops.
  std::smatch moved;
  const std::string log = p.agent_log();
  REQUIRE(std::regex_search(log, moved, std::regex("c1: (\\d+) events not yet sent moved into its successor")));
  const uint64_t into_successor = std::stoull(moved[1]);
  CHECK(into_successor > 0);
  CHECK(into_successor <= 6000);
  const std::string left = std::to_string(30000 - into_successor);
  CHECK_THAT(log, Catch::Contains(left + " events stay in it"));
  CHECK(reload_to(p, spillable("first", large), "applied"));
  INFO(log_lines_with(p.agent_log(), {"reload", "channel", "stopped:"}));
  CHECK_THAT(p.agent_log(),
             Catch::Contains("opens on its directories and replays what it holds (" + left + " events)"));
  p.control_broker("up");
  REQUIRE(eventually([&] { return p.stored() == 30000; }, 60s));
  CHECK(p.stop_agent(30s) == 0);
  check_every_event_once(p, 30000);
}

TEST_CASE("a disk channel renamed onto the directories the running one holds is refused, and nothing changes",
          "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const std::string config = with_spillable_channel(ten_sink_config(p.bootstrap(), kAcksAll), p.dir().file("spill"));
  p.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  // c1 becomes c2 everywhere, on the same directories: they are c1's, locked while it runs.
  const std::string renamed = std::regex_replace(config, std::regex("\\bc1\\b"), "c2");
  CHECK(reload_to(p, renamed, "refused"));
  CHECK_THAT(p.agent_log(), Catch::Contains("reload refused: channel c2 would open the directories channel c1 uses"));
  REQUIRE(p.send_until_stored(20000, 20000));
  CHECK(p.stop_agent(30s) == 0);
  check_every_event_once(p, 20000);
}

TEST_CASE(
    "a reload that changes a source's interceptors applies them to what follows: every event once, each with "
    "the header of its time",
    "[e2e][reload][interceptors]") {
  Pipeline p;
  p.start_broker();
  std::string base = with_fixed_ports(ten_sink_config(p.bootstrap(), kAcksAll));
  for (int k = 0; k < 10; ++k) base += "t.sinks.k" + std::to_string(k) + ".kafka.headers = dc\n";
  const auto with_dc = [&](const std::string& value) {
    return base +
           "t.sources.r1.interceptors = dc\nt.sources.r1.interceptors.dc.type = static\n"
           "t.sources.r1.interceptors.dc.key = dc\nt.sources.r1.interceptors.dc.value = " +
           value + "\n";
  };
  p.start_agent(with_dc("before"), "t", {"--metrics", "127.0.0.1:0"});
  REQUIRE(p.send_until_stored(20000, 20000));  // connections 0 and 1
  const std::string before = keep_summary(p, "sent-before.json");
  CHECK(reload_to(p, with_dc("after"), "applied"));
  REQUIRE(p.send({"-c", "2", "-n", "20000", "-d", "30s", "--first-connection", "2"}) == 0);
  REQUIRE(eventually([&] { return p.stored() == 40000; }, 30s));
  CHECK(p.stop_agent(30s) == 0);
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.balances());
  CHECK(account.lost == 0);
  check_every_event_once(p, 40000, {before});
  // Each event has the header of its send's time: connections 0 and 1 came before the reload.
  std::map<std::string, uint64_t> by_header;
  uint64_t wrong_header = 0;
  sluice::kafka::TopicReader reader(p.bootstrap(), "ApacheLog");
  reader.read_all(
      [&](int32_t, int64_t, int64_t, std::string_view payload) {
        const std::string header = reader.headers().at(0);
        ++by_header[header];
        const auto id = sluice::loadgen::parse_event_id(payload);
        wrong_header += !id || header != (id->connection < 2 ? "dc=before" : "dc=after");
      },
      sluice::kafka::ReadOptions{});
  CHECK(by_header == std::map<std::string, uint64_t>{{"dc=after", 20000}, {"dc=before", 20000}});
  CHECK(wrong_header == 0);
}

TEST_CASE("a failover group one of whose new sinks cannot start at reload keeps running as it was",
          "[e2e][reload][sinkgroups]") {
  Pipeline p;
  p.start_broker();
  const std::string base = ten_sink_config(p.bootstrap(), {"acks = 1"}) +
                           "t.sinkgroups = g\nt.sinkgroups.g.sinks = k3 k4\nt.sinkgroups.g.processor.type = failover\n"
                           "t.sinkgroups.g.processor.priority.k3 = 10\nt.sinkgroups.g.processor.priority.k4 = 5\n";
  p.start_agent(base, "t", {"--metrics", "127.0.0.1:0"});
  // The standby's producer cannot be made: the group is rebuilt, then falls back whole.
  const std::string broken = base + unstartable_producer("k4");
  CHECK(reload_to(p, broken, "failed"));
  CHECK_THAT(p.agent_log(), Catch::Contains("reload: sink k4 did not start") &&
                                Catch::Contains("sink group g keeps its previous settings"));
  REQUIRE(p.send_until_stored(20000, 20000));
  // The standby still stands by: the group it runs in is the one it ran in, k3 active.
  CHECK(p.metric("sluice_sinkgroup_sink_active{group=\"g\",sink=\"k3\"}") == 1);
  CHECK(p.metric("sluice_sinkgroup_sink_active{group=\"g\",sink=\"k4\"}") == 0);
  CHECK(p.metric("sluice_sink_events_sent_total{sink=\"k4\"}") == 0);
  CHECK(p.stop_agent(30s) == 0);
  check_every_event_once(p, 20000);
}

TEST_CASE(
    "a reload that changes only a spillable channel's memoryCapacity is applied, on the same directories, and the "
    "source keeps listening on its port",
    "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const auto spillable = [&](int memory) {
    return with_channel(
        ten_sink_config(p.bootstrap(), kAcksAll),
        "t.channels.c1.type = spillablememory\nt.channels.c1.memoryCapacity = " + std::to_string(memory) +
            "\nt.channels.c1.transactionCapacity = 1000\n" + "t.channels.c1.dataDir = " + p.dir().file("spill") + "\n");
  };
  p.start_agent(spillable(10000), "t", {"--metrics", "127.0.0.1:0"});
  const std::string ports = ready_ports(p, "r1");
  // Idle: the old channel closes (its memory to disk), its successor opens the same directories.
  CHECK(reload_to(p, spillable(20000), "applied"));
  CHECK(reload_to(p, spillable(5000), "applied"));
  INFO(log_lines_with(p.agent_log(), {"reload", "channel", "source"}));
  CHECK(reloads(p, "failed") == 0);
  CHECK(ready_ports(p, "r1") == ports);  // the same ports (given as 0: the ones it had)
  REQUIRE(p.send_until_stored(1000, 1000));
  CHECK(p.stop_agent(30s) == 0);
  check_every_event_once(p, 1000);
}

TEST_CASE(
    "a storm of reloads under load (a source's, a sink's and a spillable channel's settings in turn): no reload fails, "
    "no connection is refused, every event once",
    "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const auto config = [&](int step) {
    const std::string batch = step % 3 == 0 ? "1000" : "500";      // the source's
    const std::string linger = step % 3 == 1 ? "5" : "20";         // the sinks'
    const std::string memory = step % 3 == 2 ? "20000" : "30000";  // the channel's
    std::string text = ten_sink_config(p.bootstrap(), kAcksAll);
    text = std::regex_replace(text, std::regex("batchSize = 1000"), "batchSize = " + batch);
    text = std::regex_replace(text, std::regex("linger\\.ms = 5"), "linger.ms = " + linger);
    return with_channel(text, "t.channels.c1.type = spillablememory\nt.channels.c1.memoryCapacity = " + memory +
                                  "\nt.channels.c1.transactionCapacity = 8000\nt.channels.c1.dataDir = " +
                                  p.dir().file("spill") + "\n");
  };
  // Its ports are given as 0: each source rebuilt gets the sockets its predecessor listened on.
  p.start_agent(config(0), "t", {"--metrics", "127.0.0.1:0"});
  const std::string ports = ready_ports(p, "r1");
  int sent = -1;
  TestThread sender([&] { sent = p.send({"-c", "4", "-n", "150000", "-r", "10000", "-d", "60s"}); });
  REQUIRE(eventually([&] { return p.metric("sluice_source_events_received_total") > 10000; }, 20s));
  for (int step = 1; step <= 13; ++step) {
    INFO("reload " << step);
    CHECK(reload_to(p, config(step), "applied"));
  }
  CHECK(ready_ports(p, "r1") == ports);
  sender.join();
  REQUIRE(sent == 0);
  CHECK(reloads(p, "failed") == 0);
  const std::string summary = read_file(p.dir().file("sent.json"));
  INFO("sender: " << summary.substr(0, 300));
  CHECK(json_count(summary, "connects_failed") == 0);  // the port listened throughout
  CHECK(json_count(summary, "possibly_lost") == 0);
  REQUIRE(eventually([&] { return p.stored() == 150000; }, 60s));
  CHECK(p.stop_agent(30s) == 0);
  check_every_event_once(p, 150000);
  const ShutdownAccount account = shutdown_account(p.agent_log());
  CHECK(account.balances());
  CHECK(account.lost == 0);
}

TEST_CASE("SIGTERM while a reload waits for a config filter's command stops the agent at once", "[e2e][reload]") {
  Pipeline p;
  p.start_broker();
  const std::string base = ten_sink_config(p.bootstrap(), kAcksAll);
  p.start_agent(base, "t", {"--metrics", "127.0.0.1:0"});
  // The new file's password comes from a command that takes 600 s (its timeout, at most).
  std::ofstream(p.dir().file("agent.properties"))
      << base
      << "t.configfilters = slow\nt.configfilters.slow.type = external\nt.configfilters.slow.command = /bin/sleep\n"
         "t.configfilters.slow.timeout = 600s\nt.sinks.k1.kafka.producer.client.id = ${slow['600']}\n";
  p.agent().signal(SIGHUP);
  REQUIRE(eventually([&] { return p.agent_log().find("reloading ") != std::string::npos; }, 10s));
  p.agent().signal(SIGTERM);
  // Waited for far less than the command's 600 s, and half the default shutdown timeout: the stop
  // did not wait for the command, nor for its own deadline.
  const std::optional<int> code = p.agent().wait(15s);
  INFO(p.agent_log());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK_THAT(p.agent_log(), Catch::Contains("the agent is stopping"));
}
