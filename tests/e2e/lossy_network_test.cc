// The shutdown drain on a lossy link: 3% of the segments going to the agent are dropped (in a
// network namespace of the test's own) while the agent is SIGTERMed and restarted under load.
// Segments are retransmitted, acknowledgements come late, a sender sees our FIN only at its next
// write: an agent that closed a connection because it had been quiet for a while would reset
// it with bytes still on their way (lost, and counted by nobody). The verdict: every event
// once, the sender acknowledged all it wrote (it declared nothing possibly lost), and no
// connection was cut.

#include <signal.h>

#include <catch2/catch.hpp>

#include <thread>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"
#include "tests/support/private_network.h"
#include "tests/support/summary_json.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

TEST_CASE("on a link that drops 3% of segments, SIGTERM and restart under load lose nothing and cut no connection",
          "[e2e][shutdown][lossy]") {
  PrivateNetwork network;  // before anything starts: every process of the test lives in it
  Pipeline p;
  p.start_broker();
  // Restarts listen where the sender reconnects.
  const std::string config =
      with_spillable_channel(with_fixed_ports(ten_sink_config(p.bootstrap(), kAcksAll)), p.dir().file("spill"));
  const std::vector<std::string> args{"--metrics", "127.0.0.1:0", "--shutdown-timeout", "10s"};
  p.start_agent(config, "t", args);
  for (uint16_t port : p.agent_ports()) network.drop_segments_to(port, 0.03);

  int sent = -1;
  TestThread sender([&] { sent = p.send({"-c", "4", "-r", "20000", "-d", "16s"}, 120s); });
  constexpr int kRestarts = 3;
  for (int i = 0; i < kRestarts; ++i) {
    std::this_thread::sleep_for(2500ms);  // the schedule, not a synchronisation
    p.agent().signal(SIGTERM);
    REQUIRE(p.agent().wait(30s) == std::optional<int>(0));
    p.start_agent(config, "t", args);
  }
  sender.join();
  CHECK(sent == 0);
  CHECK(eventually([&] { return p.metric("sluice_channel_events") == 0; }, 60s, 200ms));
  REQUIRE(p.stop_agent(30s) == std::optional<int>(0));

  std::string report;
  p.verify(report);
  const std::string summary = read_file(p.dir().file("sent.json"));
  const uint64_t dropped = network.dropped_segments();
  INFO(report << "\nsender: " << summary.substr(0, 400) << "\nsegments dropped: " << dropped);
  CHECK(dropped > 100);  // the link was lossy indeed
  const std::vector<ShutdownAccount> runs = shutdown_accounts(p.agent_log());
  CHECK(runs.size() == kRestarts + 1);
  uint64_t possibly_duplicated = 0;
  for (const ShutdownAccount& a : runs) {
    possibly_duplicated += a.possibly_duplicated;
    CHECK(a.balances());
    CHECK(a.lost == 0);
    CHECK(a.unread_bytes == 0);
    CHECK(a.connections_cut == 0);
  }
  CHECK(json_count(summary, "possibly_lost") == 0);  // everything written was acknowledged...
  CHECK(missing_in(report) == 0);                    // ...and stored
  CHECK(duplicates_in(report) <= possibly_duplicated);
}
