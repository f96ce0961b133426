// The agent's memory bound (agent/api/memory_bound.h, docs/memory.md),
// proved under the clients it is meant for: one agent flooded at once with half-open TLS
// handshakes up to maxConnections, slow senders each holding an eventSize partial frame (with a
// maximal octet count), RELP sessions holding maxDataSize partial frames and RELP clients that
// flood and never read their replies, while a well-behaved sender on a port of its own sends
// 50,000 events, its batches each of one severity in turn through a multiplexing selector on
// Severity. Its peak RSS stays under the bound the agent states, and the well-behaved sender's
// events are all stored, once.

#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"
#include "tests/support/test_certificates.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

constexpr int kTlsConnections = 200, kPlainConnections = 200, kRelpConnections = 100;

// A connection to 127.0.0.1:port that sends `bytes` (as far as the agent takes them now) and
// stays open; -1 if refused.
int hold(uint16_t port, const std::string& bytes) {
  int fd = -1;
  try {
    fd = connect_loopback(port);
  } catch (const std::exception&) {
    return -1;
  }
  const timeval brief{0, 200'000};  // a flooder whose sends block has made its point
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &brief, sizeof brief);
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return fd;
}

uint16_t port_of(const Pipeline& p, const std::string& source) {
  return static_cast<uint16_t>(std::stoi(value_of(read_file(p.dir().file("ready")), "source." + source + ".ports")));
}

std::string relp_frame(uint32_t txnr, const std::string& command, const std::string& data) {
  return std::to_string(txnr) + " " + command + " " + std::to_string(data.size()) + (data.empty() ? "" : " ") + data +
         "\n";
}

}  // namespace

TEST_CASE(
    "flooded at once by half-open TLS handshakes, slow senders and hostile RELP sessions, the agent stays "
    "under the memory bound it states and stores a well-behaved sender's events",
    "[e2e][memory]") {
  // The test holds 500 connections of its own beside the pipeline's: a soft limit of 4096 is
  // room enough. Only the soft limit: a hard limit lowered here would stay this process's (only a
  // privileged process raises it again) and every child's. Under ctest each case runs in a process
  // of its own (catch_discover_tests), but a run of the whole sluice-e2e-tests binary would carry
  // it into the cases after this one, the 10,000-connection case among them.
  rlimit files{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &files) == 0);
  files.rlim_cur = std::min<rlim_t>(files.rlim_max, std::max<rlim_t>(files.rlim_cur, 4096));
  ::setrlimit(RLIMIT_NOFILE, &files);
  const std::string agent = measured_agent();
  INFO(kNoMeasuredAgent);
  REQUIRE(!agent.empty());
  Pipeline p;
  p.use_agent_program(agent);
  p.start_broker();
  const CertificateFiles certs = make_certificates(p.dir().path());
  // r1 is the well-behaved sender's (the harness sends to r1); the others are flooded.
  std::string config = std::regex_replace(ten_sink_config(p.bootstrap(), {"acks = 1"}),
                                          std::regex("t\\.sources = r1\n"), "t.sources = r1 tls plain relp\n");
  config = std::regex_replace(config, std::regex("t\\.channels\\.c1\\.capacity = 60000\n"),
                              "t.channels.c1.capacity = 20000\nt.channels.c1.byteCapacity = 16m\n");
  config += "t.sources.r1.maxConnections = 16\n";
  // r1's events go through a multiplexing selector on Severity, a route per severity (all into c1):
  // the sender's batches come each of one severity in turn, the pattern that makes every route
  // reserve a batch's room (EventBatchBuilder::set_last_route; the bound counts it).
  config += "t.sources.r1.selector.type = multiplexing\nt.sources.r1.selector.header = Severity\n";
  for (int severity = 0; severity < 8; ++severity)
    config += "t.sources.r1.selector.mapping." + std::to_string(severity) + " = c1\n";
  config +=
      "t.sources.tls.type = syslogtcp\nt.sources.tls.host = 127.0.0.1\nt.sources.tls.port = 0\n"
      "t.sources.tls.channels = c1\nt.sources.tls.numProcessors = 1\nt.sources.tls.maxConnections = " +
      std::to_string(kTlsConnections) +
      "\nt.sources.tls.ssl = true\nt.sources.tls.ssl.certificate = " + certs.server_cert +
      "\nt.sources.tls.ssl.key = " + certs.server_key +
      "\nt.sources.tls.ssl.maxHandshakes = 32\nt.sources.tls.ssl.handshakeTimeout = 10m\n";
  config +=
      "t.sources.plain.type = syslogtcp\nt.sources.plain.host = 127.0.0.1\nt.sources.plain.port = 0\n"
      "t.sources.plain.channels = c1\nt.sources.plain.numProcessors = 1\nt.sources.plain.eventSize = 65536\n"
      "t.sources.plain.maxConnections = " +
      std::to_string(kPlainConnections) + "\n";
  config +=
      "t.sources.relp.type = relp\nt.sources.relp.host = 127.0.0.1\nt.sources.relp.port = 0\n"
      "t.sources.relp.channels = c1\nt.sources.relp.numProcessors = 1\nt.sources.relp.maxConnections = " +
      std::to_string(kRelpConnections) + "\n";
  p.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  const double bound = p.metric("sluice_agent_memory_bound_bytes");
  REQUIRE(bound > 0);

  std::vector<int> held;
  // Half-open TLS handshakes: a ClientHello's first bytes, never more; 32 hold handshake slots,
  // the rest wait unread. One more than maxConnections is refused.
  for (int i = 0; i <= kTlsConnections; ++i) held.push_back(hold(port_of(p, "tls"), "\x16\x03\x01\x02\x00\x01"));
  // Slow senders: a maximal octet count (larger than any frame taken: read as a line) and a
  // partial frame of just under eventSize, never finished.
  const std::string partial = "99999999 <13>app: " + std::string(64 * 1024 - 40, 'x');
  for (int i = 0; i < kPlainConnections; ++i) held.push_back(hold(port_of(p, "plain"), partial));
  // RELP: half of them hold a partial frame of almost maxDataSize (128 KiB); the other half flood
  // empty frames and never read the replies.
  const std::string open = relp_frame(1, "open", "relp_version=0\nrelp_software=test\ncommands=syslog");
  std::string flood;
  for (uint32_t txnr = 2; flood.size() < 4 << 20; ++txnr) flood += relp_frame(txnr, "syslog", "");
  const std::string big = "2 syslog 131000 <13>app: " + std::string(130'000, 'y');
  for (int i = 0; i < kRelpConnections; ++i) held.push_back(hold(port_of(p, "relp"), open + (i % 2 ? flood : big)));
  CHECK(eventually([&] { return p.metric("sluice_source_reads_paused_total") >= kRelpConnections / 2; }, 30s));
  // Each bound holds by itself: 32 handshakes, the rest of the TLS flood waiting unread.
  CHECK(eventually([&] { return p.metric("sluice_source_tls_connections_awaiting_handshake") == kTlsConnections - 32; },
                   30s));
  CHECK(p.metric("sluice_source_tls_handshakes_in_progress") == 32);

  // Beside them, a sender that behaves: a thousand events of each severity in turn.
  std::string priorities;
  for (int severity = 0; severity < 8; ++severity)
    for (int i = 0; i < 1000; ++i) priorities += (priorities.empty() ? "" : ",") + std::to_string(128 + severity);
  REQUIRE(p.send({"-c", "2", "-n", "50000", "-r", "20000", "-d", "60s", "--priorities", priorities}) == 0);
  REQUIRE(eventually([&] { return p.stored() >= 50000; }, 60s));
  const long peak_kb = p.agent_peak_rss_kb();
  const double refused = p.metric("sluice_source_connections_refused_total");
  // Read back now: at the stop the slow senders' partial frames are kept as Incomplete events,
  // 13 MB in one partition, more than the embedded Kafka keeps of a partition (its newest ~5 MiB).
  std::string report;
  p.verify(report);
  for (int fd : held)
    if (fd >= 0) ::close(fd);
  CHECK(p.stop_agent(30s) == 0);
  INFO(report << "\npeak RSS " << peak_kb / 1024 << " MiB, bound " << bound / (1 << 20) << " MiB; refused " << refused);
  std::fprintf(stderr, "memory: peak RSS %ld MiB under a bound of %.0f MiB\n", peak_kb / 1024, bound / (1 << 20));
  CHECK(refused >= 1);  // the flood reached maxConnections
  CHECK(peak_kb * 1024.0 <= bound);
  CHECK_THAT(report, Catch::Contains("unique 50000, duplicates 0, missing 0"));
}
