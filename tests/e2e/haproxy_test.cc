// Several agents behind a TCP load balancer: Debian's HAProxy (unpacked by tests/peers/unpack.sh)
// deals connections round robin to two agents with the PROXY protocol v2 (send-proxy-v2), from
// an address of its own (127.0.0.9), so that an event carrying 127.0.0.1 — the load generator's
// address — can only have learnt it from the header. One Kafka for both agents.

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

bool accepts(uint16_t port) {
  try {
    ::close(connect_loopback(port));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// The ten-sink shape behind a PROXY v2 balancer, every event's client address in a Kafka header.
std::string proxied_config(const std::string& bootstrap) {
  std::string config = ten_sink_config(bootstrap, kAcksAll) +
                       "t.sources.r1.proxyProtocol = v2\nt.sources.r1.proxyTrustedFrom = 127.0.0.9\n"
                       "t.sources.r1.clientIPHeader = clientIP\n";
  for (int i = 0; i < 10; ++i) config += "t.sinks.k" + std::to_string(i) + ".kafka.headers = clientIP\n";
  return config;
}

// HAProxy in TCP mode on `front`, dealing connections round robin to `servers` (its lines).
std::string haproxy_config(uint16_t front, const std::vector<std::string>& servers, const std::string& options = "") {
  std::string config =
      "global\n  maxconn 1000\n"
      "defaults\n  mode tcp\n  timeout connect 5s\n  timeout client 60s\n  timeout server 60s\n" +
      options + "frontend syslog\n  bind 127.0.0.1:" + std::to_string(front) +
      "\n  default_backend agents\nbackend agents\n  balance roundrobin\n";
  for (const std::string& server : servers) config += "  " + server + "\n";
  return config;
}

}  // namespace

TEST_CASE("behind HAProxy (send-proxy-v2, round robin) two agents store every event once with its client's address",
          "[e2e][proxy]") {
  const std::string haproxy = source_path("build/peers/haproxy/usr/sbin/haproxy");
  INFO("haproxy is unpacked by `bash tests/peers/unpack.sh haproxy` (.ci/run does it)");
  REQUIRE(std::ifstream(haproxy).good());
  Pipeline a, b;
  a.start_broker();
  b.use_kafka(a.bootstrap(), a.topic());
  a.start_agent(proxied_config(a.bootstrap()), "t", {"--metrics", "127.0.0.1:0"});
  b.start_agent(proxied_config(a.bootstrap()), "t", {"--metrics", "127.0.0.1:0"});

  const uint16_t port_a = a.agent_ports().at(0), port_b = b.agent_ports().at(0);
  const uint16_t front = free_ports(1)[0];  // HAProxy's frontend
  std::ofstream(a.dir().file("haproxy.cfg"))
      << haproxy_config(front, {"server a 127.0.0.1:" + std::to_string(port_a) + " send-proxy-v2 source 127.0.0.9",
                                "server b 127.0.0.1:" + std::to_string(port_b) + " send-proxy-v2 source 127.0.0.9"});
  ChildProcess balancer({haproxy, "-db", "-f", a.dir().file("haproxy.cfg")}, a.dir().file("haproxy.log"));
  REQUIRE(eventually([&] { return accepts(front); }, 10s));

  // 8 connections through the balancer: 4 to each agent.
  a.send_to({front});
  REQUIRE(a.send({"-c", "8", "-n", "100000", "-r", "50000", "-d", "60s"}) == 0);
  // A sender that skips the balancer is refused, even with a header naming a client of its choice:
  // 127.0.0.1 is not the balancer (proxyTrustedFrom = 127.0.0.9).
  const int direct = connect_loopback(port_a);
  const std::string line = "PROXY TCP4 10.1.2.3 127.0.0.1 51234 514\r\n<13>Dec  2 10:00:00 h app: forged client\n";
  REQUIRE(::write(direct, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  CHECK(eventually(
      [&] {
        return a.metric("sluice_source_connections_refused_total{source=\"r1\",reason=\"proxy_untrusted\"}") == 1;
      },
      10s));
  CHECK(closed_by_peer(direct, 5s));
  ::close(direct);

  const double received_a = a.metric("sluice_source_events_received_total"),
               received_b = b.metric("sluice_source_events_received_total");
  // Round robin: 4 of the 8 connections each, a also had the refused one, and either may have had
  // the readiness check's (HAProxy connects a server for it if it is quick enough).
  const double accepted_a = a.metric("sluice_source_connections_accepted_total"),
               accepted_b = b.metric("sluice_source_connections_accepted_total");
  CHECK(accepted_a >= 5);
  CHECK(accepted_b >= 4);
  CHECK(accepted_a + accepted_b <= 10);
  balancer.signal(SIGTERM);
  CHECK(balancer.wait(10s).has_value());
  CHECK(a.stop_agent(30s) == 0);
  CHECK(b.stop_agent(30s) == 0);
  CHECK(received_a > 0);
  CHECK(received_b > 0);
  CHECK(received_a + received_b == 100000);

  std::string report;
  CHECK(a.verify(report) == 0);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 100000, duplicates 0, missing 0"));

  // kcat reads the headers back: every event names the load generator's address, none HAProxy's.
  REQUIRE(
      run({"/usr/bin/kcat", "-C", "-b", a.bootstrap(), "-t", a.topic(), "-o", "beginning", "-e", "-q", "-f", "%h\\n"},
          a.dir().file("headers.txt"), 60s) == 0);
  std::map<std::string, int> headers;
  std::istringstream lines(read_file(a.dir().file("headers.txt")));
  for (std::string h; std::getline(lines, h);) ++headers[h];
  CHECK(headers == std::map<std::string, int>{{"clientIP=127.0.0.1", 100000}});
}

TEST_CASE(
    "maxConnectionAge behind HAProxy: a third agent added gets a share of four long-lived senders, every event once",
    "[e2e][proxy][age]") {
  const std::string haproxy = source_path("build/peers/haproxy/usr/sbin/haproxy");
  INFO("haproxy is unpacked by `bash tests/peers/unpack.sh haproxy` (.ci/run does it)");
  REQUIRE(std::ifstream(haproxy).good());
  // Connections live 2-3 s; the third agent's port is known before it listens, and HAProxy finds it
  // by its health check (a connect), sending nobody there while it is down.
  const std::string aging = "t.sources.r1.maxConnectionAge = 2s\nt.sources.r1.maxConnectionAgeJitter = 1s\n";
  Pipeline a, b, c;
  a.start_broker();
  b.use_kafka(a.bootstrap(), a.topic());
  c.use_kafka(a.bootstrap(), a.topic());
  const std::string config = ten_sink_config(a.bootstrap(), kAcksAll) + aging;
  a.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  b.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  const uint16_t port_c = free_ports(1)[0];
  std::string config_c = config;
  const std::string any_ports = "t.sources.r1.ports = 0 0\n";
  config_c.replace(config_c.find(any_ports), any_ports.size(), "t.sources.r1.ports = " + std::to_string(port_c) + "\n");

  const uint16_t front = free_ports(1)[0];
  const std::string checked = " check inter 200 fall 1 rise 1";
  std::ofstream(a.dir().file("haproxy.cfg"))
      << haproxy_config(front,
                        {"server a 127.0.0.1:" + std::to_string(a.agent_ports().at(0)) + checked,
                         "server b 127.0.0.1:" + std::to_string(b.agent_ports().at(0)) + checked,
                         "server c 127.0.0.1:" + std::to_string(port_c) + checked},
                        "  retries 3\n  option redispatch 1\n");
  ChildProcess balancer({haproxy, "-db", "-f", a.dir().file("haproxy.cfg")}, a.dir().file("haproxy.log"));
  REQUIRE(eventually([&] { return accepts(front); }, 10s));

  // Four senders that stay connected for the whole run (each reconnects only when asked to).
  const auto received = [](const Pipeline& p) { return p.metric("sluice_source_events_received_total"); };
  a.send_to({front});
  int sent = -1;
  TestThread senders([&] { sent = a.send({"-c", "4", "-n", "240000", "-r", "16000", "-d", "60s"}); });
  REQUIRE(eventually([&] { return received(a) + received(b) >= 32000; }, 20s));
  c.start_agent(config_c, "t", {"--metrics", "127.0.0.1:0"});
  // Within an age and its jitter (3 s) and a health check, connections asked to go come back to it.
  CHECK(eventually([&] { return received(c) > 0; }, 15s, 100ms));
  senders.join();
  REQUIRE(sent == 0);

  const double aged =
      a.metric("sluice_source_connections_aged_total") + b.metric("sluice_source_connections_aged_total");
  const double received_c = received(c);
  const double total = received(a) + received(b) + received_c;
  balancer.signal(SIGTERM);
  CHECK(balancer.wait(10s).has_value());
  CHECK(a.stop_agent(30s) == 0);
  CHECK(b.stop_agent(30s) == 0);
  CHECK(c.stop_agent(30s) == 0);
  CHECK(aged >= 4);
  CHECK(received_c >= 1000);
  CHECK(total == 240000);
  for (Pipeline* p : {&a, &b, &c}) CHECK(shutdown_account(p->agent_log()).connections_cut == 0);
  std::string report;
  CHECK(a.verify(report) == 0);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("unique 240000, duplicates 0, missing 0"));
}
