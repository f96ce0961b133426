// RELP end to end with the real client: rsyslog's omrelp (librelp) reads numbered lines with
// imfile and sends them through a disk-assisted queue to the agent's relp source, whose replies
// decide what rsyslog may forget. Faults: the agent SIGKILLed mid-stream, Kafka down, the
// connection cut by idleTimeout. The verifier reads Kafka back: nothing may be missing.

#include <signal.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

// The seed's shape with a relp source on `port` (0: a free one) and `extra` source lines.
std::string relp_config(const std::string& config, uint16_t port, const std::string& extra = "") {
  std::string text = std::regex_replace(config, std::regex("t\\.sources\\.r1\\.type = multiport_syslogtcp"),
                                        "t.sources.r1.type = relp");
  text = std::regex_replace(text, std::regex("t\\.sources\\.r1\\.ports = 0 0"),
                            "t.sources.r1.ports = " + std::to_string(port));
  return text + extra;
}

// rsyslogd (Debian's, unpacked by tests/peers/unpack.sh) sending `lines` numbered lines of
// connection 1 ("/lg/00001/<seq>") to 127.0.0.1:port over RELP. Writes the verifier's summary.
// omrelp's `timeout` (its default is 90 s): a reply not there by then breaks the session, and
// rsyslog reconnects and resends its window (duplicates, each counted by the verifier).
class RsyslogRelpSender {
 public:
  RsyslogRelpSender(Pipeline& p, uint16_t port, int lines, int timeout_s = 90) : p_(p) {
    const std::string rsyslog = source_path("build/peers/rsyslog");
    INFO("rsyslog is unpacked by `bash tests/peers/unpack.sh rsyslog` (.ci/run does it)");
    REQUIRE(std::ifstream(rsyslog + "/usr/lib/x86_64-linux-gnu/rsyslog/omrelp.so").good());
    const std::string work = p.dir().file("rsyslog");
    std::filesystem::create_directories(work);
    {
      std::ofstream out(p.dir().file("lines.txt"));
      char seq[16];
      for (int i = 0; i < lines; ++i) {
        std::snprintf(seq, sizeof seq, "%010d", i);
        out << "relp line /lg/00001/" << seq << "\n";
      }
    }
    std::ofstream(p.dir().file("sent.json"))
        << "{\"sent\":" << lines << ",\"connections\":[\n {\"id\":1,\"sent\":" << lines << ",\"lost\":[]}]}\n";
    // A disk-assisted queue that keeps what is not acknowledged; retried every second, forever.
    std::ofstream(p.dir().file("rsyslog.conf"))
        << "global(workDirectory=\"" << work << "\")\n"
        << "module(load=\"imfile\")\nmodule(load=\"omrelp\")\n"
        << "input(type=\"imfile\" file=\"" << p.dir().file("lines.txt") << "\" tag=\"relptest:\" ruleset=\"out\")\n"
        << "ruleset(name=\"out\") {\n"
        << "  action(type=\"omrelp\" target=\"127.0.0.1\" port=\"" << port << "\" windowSize=\"128\" timeout=\""
        << timeout_s << "\""
        << " queue.type=\"LinkedList\" queue.filename=\"relpq\" queue.saveOnShutdown=\"on\" queue.size=\"200000\""
        << " action.resumeRetryCount=\"-1\" action.resumeInterval=\"1\")\n"
        << "}\n";
    process_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{rsyslog + "/usr/sbin/rsyslogd", "-n", "-f", p.dir().file("rsyslog.conf"), "-i",
                                 p.dir().file("rsyslogd.pid"), "-M", rsyslog + "/usr/lib/x86_64-linux-gnu/rsyslog"},
        p.dir().file("rsyslogd.log"));
  }
  ~RsyslogRelpSender() { stop(); }
  void stop() {
    if (!process_) return;
    process_->signal(SIGTERM);
    process_->wait(15s);
    process_.reset();
  }
  std::string log() const { return read_file(p_.dir().file("rsyslogd.log")); }

 private:
  Pipeline& p_;
  std::unique_ptr<ChildProcess> process_;
};

double acknowledged(Pipeline& p) { return p.metric("sluice_source_events_acknowledged_total"); }

}  // namespace

TEST_CASE("rsyslog omrelp into a relp source with acks=all: 20,000 lines land once, each acknowledged after Kafka",
          "[e2e][relp]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(relp_config(ten_sink_config(p.bootstrap(), kAcksAll), 0), "t", {"--metrics", "127.0.0.1:0"});
  RsyslogRelpSender rsyslog(p, p.agent_ports().at(0), 20000);
  const bool all_acknowledged = eventually([&] { return acknowledged(p) == 20000; }, 60s, 100ms);
  INFO(rsyslog.log() << p.agent_log());
  REQUIRE(all_acknowledged);
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 20000, duplicates 0, missing 0"));
  rsyslog.stop();
  CHECK(p.metric("sluice_source_protocol_errors_total") == 0);
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE(
    "RELP with a file channel and ackAfter = channel: the agent SIGKILLed mid-stream and restarted, nothing "
    "missing",
    "[e2e][relp]") {
  Pipeline p;
  p.start_broker();
  const std::string file_channel =
      "t.channels.c1.type = file\nt.channels.c1.transactionCapacity = 8000\n"
      "t.channels.c1.dataDir = " +
      p.dir().file("spill") + "\n";
  std::string config = with_channel(ten_sink_config(p.bootstrap(), kAcksAll), file_channel);
  p.start_agent(relp_config(config, 0, "t.sources.r1.ackAfter = channel\n"), "t", {"--metrics", "127.0.0.1:0"});
  const uint16_t port = p.agent_ports().at(0);
  constexpr int kLines = 100000;
  RsyslogRelpSender rsyslog(p, port, kLines);
  REQUIRE(eventually([&] { return acknowledged(p) >= 10000; }, 60s, 20ms));
  const double before_kill = acknowledged(p);
  p.agent().signal(SIGKILL);
  REQUIRE(p.agent().wait(10s).has_value());
  // The same port again: rsyslog reconnects and resends what it has no reply for.
  p.start_agent(relp_config(config, port, "t.sources.r1.ackAfter = channel\n"), "t", {"--metrics", "127.0.0.1:0"});
  std::string report;
  const bool complete = p.verify_until_complete(report, 90s, 1s);
  INFO(report << rsyslog.log() << p.agent_log());
  CHECK(before_kill < kLines);  // killed mid-stream
  CHECK(complete);
  CHECK_THAT(report, Catch::Contains("unique " + std::to_string(kLines)));
  // Duplicates only (1) where the kill came between a put and its reply reaching rsyslog: one window,
  // resent once on the reconnect; and (2) the sinks' takes in flight, delivered but not committed at
  // the kill, which the restarted channel replays: within what it recovered (ten sinks, each with a
  // take of one 128-event record in flight, made 1,280 in an optimised build).
  const double recovered = p.metric("sluice_channel_events_recovered_total");
  INFO("recovered by the restarted channel: " << recovered);
  CHECK(recovered < kLines);
  CHECK(duplicates_in(report) <= recovered + 128);
  rsyslog.stop();
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE(
    "RELP with Kafka down for 30 s (acks=all): nothing is acknowledged meanwhile, rsyslog's queue holds the "
    "rest, and after it all lands once",
    "[e2e][relp]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(relp_config(ten_sink_config(p.bootstrap(), kAcksAll), 0), "t", {"--metrics", "127.0.0.1:0"});
  p.wait_until_served();  // then the fault meets what its sinks take
  p.control_broker("down");
  constexpr int kLines = 20000;
  RsyslogRelpSender rsyslog(p, p.agent_ports().at(0), kLines);
  // rsyslog sends a window (128) and waits for replies that cannot come while Kafka is down.
  REQUIRE(eventually([&] { return p.metric("sluice_source_events_received_total") >= 128; }, 30s, 100ms));
  // A 30 s outage, watched every 500 ms: no reply may go out, and the agent holds about a window.
  double held = 0;
  const bool acknowledged_during_outage = eventually(
      [&] {
        held = std::max(held, p.metric("sluice_source_events_received_total"));
        return acknowledged(p) > 0;
      },
      30s, 500ms);
  p.control_broker("up");
  CHECK_FALSE(acknowledged_during_outage);
  CHECK(held <= 4 * 128);  // the agent held a window or so; the rest waited in rsyslog's queue
  const bool all_acknowledged = eventually([&] { return acknowledged(p) == kLines; }, 90s, 100ms);
  std::string report;
  p.verify(report);
  INFO(report << rsyslog.log() << p.agent_log());
  CHECK(all_acknowledged);
  CHECK_THAT(report, Catch::Contains("unique 20000, duplicates 0, missing 0"));
  rsyslog.stop();
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE(
    "RELP cut by idleTimeout while its replies wait (Kafka down): serverclose, rsyslog reconnects and resends, "
    "nothing missing",
    "[e2e][relp]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(relp_config(ten_sink_config(p.bootstrap(), kAcksAll), 0, "t.sources.r1.idleTimeout = 2s\n"), "t",
                {"--metrics", "127.0.0.1:0"});
  p.wait_until_served();  // then the fault meets what its sinks take
  p.control_broker("down");
  constexpr int kLines = 5000;
  RsyslogRelpSender rsyslog(p, p.agent_ports().at(0), kLines);
  REQUIRE(eventually([&] { return p.metric("sluice_source_connections_idle_closed_total") >= 1; }, 30s, 100ms));
  p.control_broker("up");
  const bool all_acknowledged = eventually([&] { return acknowledged(p) >= kLines; }, 90s, 100ms);
  std::string report;
  p.verify(report);
  INFO(report << rsyslog.log() << p.agent_log());
  CHECK(all_acknowledged);
  CHECK(missing_in(report) == 0);
  CHECK_THAT(report, Catch::Contains("unique 5000"));
  CHECK(duplicates_in(report) > 0);  // the window sent before the cut came again: at least once, counted
  rsyslog.stop();
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("sluice-loadgen --relp: 200,000 events over 4 sessions, every one acknowledged after Kafka, landed once",
          "[e2e][relp]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(relp_config(ten_sink_config(p.bootstrap(), kAcksAll), 0), "t", {"--metrics", "127.0.0.1:0"});
  REQUIRE(p.send({"--relp", "--window", "1024", "-c", "4", "-n", "200000", "-r", "100000"}) == 0);
  const std::string summary = read_file(p.dir().file("sent.json"));
  CHECK_THAT(summary, Catch::Contains("\"relp\":true,\"window\":1024,\"acknowledged\":200000"));
  CHECK(acknowledged(p) == 200000);
  std::string report;
  CHECK(p.verify(report) == 0);
  INFO(report << p.agent_log());
  CHECK_THAT(report, Catch::Contains("unique 200000, duplicates 0, missing 0"));
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}
