// Kafka faults end to end: the standalone mock broker's fault injection (its control FIFO)
// while the load generator runs, then the verifier proves what arrived.

#include <signal.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <regex>
#include <thread>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

TEST_CASE("broker down for 10 s under load with acks=all and idempotence: every event arrives exactly once",
          "[e2e][faults]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), kAcksAll));
  // 16 s at 20,000 events/s: the channel (60,000) fills during the outage and pushes back on the sender.
  CHECK(p.send_through_outage(2s, 10s, {"-c", "4", "-r", "20000", "-d", "16s"}) == 0);
  std::string report;
  const int verified = p.verify(report);
  INFO(report << p.agent_log());
  CHECK(verified == 0);
  CHECK_THAT(report, Catch::Contains("duplicates 0, missing 0"));
  // The outage was real: the channel filled up and pushed back on the sender.
  CHECK(std::regex_search(p.agent_log(), std::regex("channel (9[5-9]|100)\\.\\d% full")));
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("transient produce errors are retried without loss or duplicates", "[e2e][faults]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), kAcksAll));
  p.control_broker("errors produce 30 NOT_LEADER_FOR_PARTITION");
  p.control_broker("errors produce 30 REQUEST_TIMED_OUT");
  REQUIRE(p.send({"-c", "4", "-n", "100000", "-r", "50000"}) == 0);
  std::string report;
  const int verified = p.verify(report);
  INFO(report << p.agent_log());
  CHECK(verified == 0);
  CHECK_THAT(report, Catch::Contains("unique 100000, duplicates 0, missing 0"));
  CHECK_THAT(read_file(p.dir().file("broker.log")), Catch::Contains("errors produce 30 REQUEST_TIMED_OUT: done"));
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("a slow broker (RTT 200 ms) slows the pipeline but loses nothing and memory stays bounded", "[e2e][faults]") {
  Pipeline p;
  p.start_broker();
  p.control_broker("rtt 200");
  p.start_agent(ten_sink_config(p.bootstrap(), kAcksAll), "t", {"--metrics", "127.0.0.1:0"});
  // The fault took effect: a producer measured its round trips at least the 200 ms the broker
  // waits before each answer (a floor the fault sets, not a speed of this machine). Sampled while
  // the load runs: an idle statistics interval reports 0.
  double slowest = 0;
  std::atomic<bool> sending{true};
  TestThread sampler([&] {
    const auto give_up = std::chrono::steady_clock::now() + 120s;  // bounded even if the send never returns
    while (sending && std::chrono::steady_clock::now() < give_up) {
      slowest = std::max(slowest,
                         prometheus_max(http_get(p.metrics_port(), "/metrics"), "sluice_kafka_broker_rtt_avg_seconds"));
      std::this_thread::sleep_for(250ms);
    }
  });
  const int sent = p.send({"-c", "4", "-r", "0", "-d", "8s"});
  sending = false;
  sampler.join();
  REQUIRE(sent == 0);
  CHECK(slowest >= 0.199);
  // Bound: the channel (60,000 events x ~300 bytes with records) plus librdkafka's queue of
  // one take per sink (10 x 8,000 x ~120 bytes) plus the program (~40 MB): well under 256 MB.
  const long rss_kb = p.agent_peak_rss_kb();
  std::string report;
  const int verified = p.verify(report);
  INFO(report << p.agent_log());
  CHECK(verified == 0);
  CHECK(rss_kb > 0);
#if defined(__SANITIZE_ADDRESS__)
  // ASan keeps up to 256 MB of freed memory in quarantine, plus its shadow memory.
  CHECK(rss_kb < 768 * 1024);
#else
  CHECK(rss_kb < 256 * 1024);
#endif
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("SIGTERM under full load: the agent drains and accounts for every event it read", "[e2e][faults]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), {"acks = 0", "compression.codec = snappy", "linger.ms = 5"}));
  TestThread stopper([&] {
    std::this_thread::sleep_for(2s);  // the schedule: SIGTERM 2 s into the load
    p.agent().signal(SIGTERM);
  });
  // Its connections break when the agent goes: that is expected. (At 150,000 events/s the run stays
  // within what the embedded Kafka keeps of a partition, its newest ~5 MiB, for the verifier below.)
  p.send({"-c", "4", "-r", "150000", "-d", "6s"});
  stopper.join();
  const auto code = p.agent().wait(60s);
  const std::string log = p.agent_log();
  INFO(log);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  const ShutdownAccount a = shutdown_account(log);
  REQUIRE(a.found);
  CHECK(a.in > 0);
  CHECK(a.balances());
  CHECK(a.read == a.in + a.never_put);
  // acks=0: what the agent handed over is in Kafka unless a delivery report said otherwise.
  CHECK(p.stored() == a.sent - a.lost_after_handover);

  // By connection and sequence number: nothing twice (acks=0 never sends again), and missing only
  // what the account says it let go (the verifier already excuses what the sender declared
  // possibly lost): lost at shutdown (in the channel, or read and never put), lost after the
  // hand-over or possibly lost there, discarded, and what it left unread in a connection it cut
  // (bytes: at most one event per 120, the load generator's --size, and one more per frame cut).
  constexpr uint64_t kEventBytes = 120;
  std::string report;
  p.verify(report);
  INFO(report);
  const uint64_t allowed = a.lost + a.lost_after_handover + a.possibly_lost + a.discarded +
                           (a.unread_bytes + kEventBytes - 1) / kEventBytes + a.cut;
  CHECK(duplicates_in(report) == 0);
  CHECK(missing_in(report) <= allowed);
}
