// Per-sender fairness (maxEventsPerSecondPerClient): one sender at ten times its client's limit
// beside ten senders at a tenth of theirs, each from a loopback address of its own. The one is
// read at its limit (TCP pushes back on it alone), the ten are never held, and nothing is lost.

#include <catch2/catch.hpp>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"
#include "tests/support/summary_json.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

TEST_CASE(
    "maxEventsPerSecondPerClient: a sender at 10x its limit is held to it, ten at 1/10 beside it are not, "
    "nothing lost",
    "[e2e][fairness]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), kAcksAll) + "t.sources.r1.maxEventsPerSecondPerClient = 1000\n", "t",
                {"--metrics", "127.0.0.1:0"});
  const std::vector<uint16_t> ports = p.agent_ports();
  const std::string runaway_port = std::to_string(ports.at(0)), quiet_port = std::to_string(ports.at(1));
  const std::string loadgen = bin("sluice-loadgen");

  // The runaway: 10,000 events/s from 127.0.0.2 on the first port (12,000 events: 12 s at its limit).
  int runaway_exit = -1;
  TestThread runaway([&] {
    runaway_exit = run({loadgen, "-q", "--summary-json", p.dir().file("sent.json"), "-t", "127.0.0.1:" + runaway_port,
                        "--from", "127.0.0.2", "-c", "1", "-r", "10000", "-n", "12000", "-d", "60s"},
                       p.dir().file("runaway.log"), 90s);
  });
  // The ten: 100 events/s each from 127.0.0.3 ... 127.0.0.12 on the second port, for 8 s.
  std::vector<std::string> quiet{loadgen,
                                 "-q",
                                 "--summary-json",
                                 p.dir().file("quiet.json"),
                                 "--first-connection",
                                 "100",
                                 "-t",
                                 "127.0.0.1:" + quiet_port,
                                 "-c",
                                 "10",
                                 "-r",
                                 "1000",
                                 "-n",
                                 "8000",
                                 "-d",
                                 "60s",
                                 "--from"};
  for (int i = 3; i <= 12; ++i) quiet.push_back("127.0.0." + std::to_string(i));
  int quiet_exit = -1;
  TestThread ten([&] { quiet_exit = run(quiet, p.dir().file("quiet.log"), 90s); });

  // The runaway's rate, as the agent reads it, over 4 s once its second's worth is spent.
  const std::string runaway_received =
      "sluice_source_events_received_total{source=\"r1\",port=\"" + runaway_port + "\"}";
  REQUIRE(eventually([&] { return p.metric(runaway_received) >= 2000; }, 10s));
  // Sampled every 100 ms meanwhile: the clients held, never more than the one.
  bool held_seen = false;
  double most_held = 0;
  const double first = p.metric(runaway_received);
  const auto from = std::chrono::steady_clock::now();
  eventually(
      [&] {
        const double held = p.metric("sluice_source_clients_held");
        held_seen = held_seen || held >= 1;
        most_held = std::max(most_held, held);
        return std::chrono::steady_clock::now() - from >= 4s;
      },
      5s, 100ms);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  const double runaway_rate = (p.metric(runaway_received) - first) / seconds;
  ten.join();
  runaway.join();
  CHECK(quiet_exit == 0);
  CHECK(runaway_exit == 0);
  CHECK(held_seen);
  CHECK(most_held == 1);  // the ten were never held
  CHECK(runaway_rate > 500);
  CHECK(runaway_rate < 1500);
  CHECK(p.metric("sluice_source_client_holds_total") > 0);
  // The ten, never held, sent all they had; the runaway's 1.4 MB fit in the sockets' buffers: it
  // finished writing at once, and the agent read it at its limit since.
  CHECK(json_number(read_file(p.dir().file("quiet.json")), "sent") == 8000);

  CHECK(eventually([&] { return p.metric("sluice_source_events_received_total") == 20000; }, 30s, 100ms));
  CHECK(p.stop_agent(30s) == 0);
  std::string report;
  CHECK(p.verify(report, "", {"--expect", p.dir().file("quiet.json")}) == 0);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 20000, duplicates 0, missing 0"));
}
