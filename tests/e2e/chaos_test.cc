// Chaos, bounded: a steady load with acks=all, idempotence and a spillablememory channel while
// a schedule drawn from a seed takes the broker down and up and SIGTERMs and restarts the
// agent. The verdict comes from the verifier: nothing missing, and duplicates only where the
// agent counted possibly persisted events it sent again. Nothing is excused either: the sender
// (which closes on the agent's FIN once what it wrote is acknowledged) declares nothing possibly
// lost, and no stop leaves bytes unread, cuts a frame or cuts a connection.
//
// 20 s in CI. bench/chaos.sh runs it longer: SLUICE_CHAOS_SECONDS (default 20), SLUICE_CHAOS_RATE
// (events/s, default 10000) and SLUICE_CHAOS_SEED (default: drawn, and printed so that a
// failing schedule can be replayed).

#include <signal.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"
#include "tests/support/summary_json.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::stoull(value) : fallback;
}

}  // namespace

TEST_CASE("chaos: broker outages and agent restarts under load lose nothing and duplicate only what is counted",
          "[e2e][chaos]") {
  const uint64_t seconds = env_or("SLUICE_CHAOS_SECONDS", 20), rate = env_or("SLUICE_CHAOS_RATE", 10000);
  const uint64_t seed = env_or("SLUICE_CHAOS_SEED", std::random_device{}());
  std::fprintf(stderr, "chaos: seed %llu, %llu s at %llu events/s (replay: SLUICE_CHAOS_SEED=%llu)\n",
               static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seconds),
               static_cast<unsigned long long>(rate), static_cast<unsigned long long>(seed));
  INFO("chaos seed " << seed << " (SLUICE_CHAOS_SEED=" << seed << " replays this schedule)");
  std::mt19937_64 random(seed);
  auto between = [&](int low_ms, int high_ms) {
    return std::chrono::milliseconds(std::uniform_int_distribution<int>(low_ms, high_ms)(random));
  };

  Pipeline p;
  p.start_broker();
  // Restarts listen where the sender reconnects.
  const std::string config =
      with_spillable_channel(with_fixed_ports(ten_sink_config(p.bootstrap(), kAcksAll)), p.dir().file("spill"));
  const std::vector<std::string> args{"--metrics", "127.0.0.1:0", "--shutdown-timeout", "3s"};
  p.start_agent(config, "t", args);

  int sent = -1;
  TestThread sender([&] {
    sent = p.send({"-c", "4", "-r", std::to_string(rate), "-d", std::to_string(seconds) + "s"},
                  std::chrono::seconds(seconds + 60));
  });
  // Every fault ends 5 s before the sender does: time for it to reconnect (its backoff reaches
  // 2 s) to a restarted agent, so that no connection is down at its end. A restart lasts up to 5 s
  // (checked below: the stop's 3 s deadline, the grace for requests in flight, a start), so the
  // last one begins 10 s before; a broker's outage or return is at once.
  const auto sender_end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  bool broker_down = false;
  int outages = 0, restarts = 0;
  std::string stops_took;  // each stop's time, for the summary line
  while (true) {
    std::this_thread::sleep_for(between(500, 3000));  // the schedule, not a synchronisation
    const auto left = sender_end - std::chrono::steady_clock::now();
    if (left < 5s) break;
    const int action = std::uniform_int_distribution<int>(0, 2)(random);
    if (action != 0 && left < 10s) continue;  // too late for a restart
    if (action == 0) {
      p.control_broker(broker_down ? "up" : "down");
      broker_down = !broker_down;
      outages += broker_down;
    } else {
      // SIGTERM (with the broker up or down) and start again at once.
      const auto sigterm = std::chrono::steady_clock::now();
      p.agent().signal(SIGTERM);
      const std::optional<int> code = p.agent().wait(30s);
      REQUIRE(code == std::optional<int>(0));
      const auto stop_took = std::chrono::steady_clock::now() - sigterm;
      const std::string took =
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(stop_took).count()) +
          (broker_down ? " ms (the broker down)" : " ms");
      stops_took += " " + took;
      INFO("stop " << restarts + 1 << " took " << took << ":\n"
                   << log_lines_with(p.agent_log(), {"stopping", "stopped:", "unanswered", "purged", "grace"}));
      CHECK(stop_took < 3s + 2s);
      p.start_agent(config, "t", args);
      ++restarts;
    }
  }
  if (broker_down) p.control_broker("up");
  sender.join();
  CHECK(sent == 0);
  // Everything the agent holds reaches Kafka, then the final account.
  CHECK(eventually([&] { return p.metric("sluice_channel_events") == 0; }, 60s, 200ms));
  REQUIRE(p.stop_agent(30s) == std::optional<int>(0));

  std::string report;
  const int verified = p.verify(report);
  const std::string summary = read_file(p.dir().file("sent.json"));
  const std::vector<ShutdownAccount> runs = shutdown_accounts(p.agent_log());
  uint64_t possibly_duplicated = 0, unread_bytes = 0, frames_cut = 0, connections_cut = 0;
  for (const ShutdownAccount& a : runs) {
    possibly_duplicated += a.possibly_duplicated;
    unread_bytes += a.unread_bytes;
    frames_cut += a.cut;
    connections_cut += a.connections_cut;
    CHECK(a.balances());
    CHECK(a.lost == 0);
  }
  INFO(report << "\noutages " << outages << ", restarts " << restarts << ", possibly duplicated " << possibly_duplicated
              << ", bytes left unread at the stops " << unread_bytes << ", frames cut " << frames_cut
              << ", connections cut " << connections_cut << "\nsender: " << summary.substr(0, 300)
              << "\nthe agent's stops:\n"
              << log_lines_with(p.agent_log(), {"stopping", "stopped:", "unread", "dropped", "lost", "grace"}));
  std::fprintf(stderr, "chaos: seed %llu: %d outages, %d restarts (stops took:%s); %s",
               static_cast<unsigned long long>(seed), outages, restarts, stops_took.c_str(), report.c_str());
  // The faults happened: a schedule that drew none would prove nothing.
  CHECK(outages + restarts > 0);
  CHECK(runs.size() == static_cast<size_t>(restarts) + 1);
  CHECK(missing_in(report) == 0);
  CHECK(duplicates_in(report) <= possibly_duplicated);
  // What the verifier would excuse, and what the agent counted as not read, must be nothing: the
  // sender saw each stop's FIN and closed once all it wrote was acknowledged, and each stop read
  // every connection to its sender's close within the grace.
  CHECK(json_count(summary, "possibly_lost") == 0);
  CHECK(unread_bytes == 0);
  CHECK(frames_cut == 0);
  CHECK(connections_cut == 0);
  // Its exit code: 0, or 1 for the counted duplicates alone (2 is an error: no verdict at all).
  CHECK(verified == (duplicates_in(report) == 0 ? 0 : 1));
  CHECK_THAT(report, Catch::Contains(", unrecognised 0\n"));
  CHECK_THAT(report, !Catch::Contains("never sent, by the sender's summary"));
  CHECK_THAT(report, !Catch::Contains("the read timed out"));
}
