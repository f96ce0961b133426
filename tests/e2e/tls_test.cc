// Syslog over TLS end to end: sluice-loadgen --tls into the agent's TLS source, Kafka read back
// by the verifier. TLS must lose nothing plain TCP does not: including the end of each stream,
// when a sender that never reads closes its connection.

#include <signal.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"
#include "tests/support/process.h"
#include "tests/support/test_certificates.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

TEST_CASE("300,000 events over 4 TLS connections with client certificates land exactly once, and SIGTERM exits 0",
          "[e2e][tls]") {
  Pipeline p;
  const CertificateFiles certs = make_certificates(p.dir().path());
  p.start_broker();
  std::string config = ten_sink_config(p.bootstrap(), kAcksAll);
  config += "t.sources.r1.ssl = true\nt.sources.r1.ssl.certificate = " + certs.server_cert +
            "\nt.sources.r1.ssl.key = " + certs.server_key + "\nt.sources.r1.ssl.clientAuth = required\n" +
            "t.sources.r1.ssl.ca = " + certs.ca + "\n";
  p.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  REQUIRE(p.send({"--tls", "--cert", certs.client_cert, "--key", certs.client_key, "--ca", certs.ca, "-c", "4", "-n",
                  "300000", "-r", "150000"}) == 0);
  std::string report;
  const int verified = p.verify(report);
  INFO(report << p.agent_log());
  CHECK(verified == 0);
  CHECK_THAT(report, Catch::Contains("unique 300000, duplicates 0, missing 0"));
  CHECK(p.metric("sluice_source_tls_handshakes_total") == 4);
  CHECK(p.metric("sluice_source_tls_handshake_failures_total") == 0);
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
  CHECK(shutdown_account(p.agent_log()).cut == 0);  // every stream ended whole, none reset
}

namespace {

// The certificate the agent shows a new connection on `port`, by its fingerprint (s_client's
// -showcerts prints it as PEM, which fingerprint_of_file reads past the text around it).
std::string served_fingerprint(Pipeline& p, uint16_t port) {
  const std::string seen = p.dir().file("served.txt");
  std::remove(seen.c_str());  // run() appends
  run({"/bin/bash", "-c",
       "exec openssl s_client -connect 127.0.0.1:" + std::to_string(port) + " -showcerts < /dev/null"},
      seen, 20s);
  return fingerprint_of_file(seen);
}

void copy_file(const std::string& from, const std::string& to) {
  std::ofstream(to, std::ios::trunc | std::ios::binary) << read_file(from);
}

}  // namespace

TEST_CASE(
    "SIGHUP to the agent: new TLS connections get the renewed certificate, a broken one keeps the old, and a "
    "stream sent meanwhile lands whole",
    "[e2e][tls]") {
  Pipeline p;
  const CertificateFiles certs = make_certificates(p.dir().path());
  const std::string live_cert = p.dir().file("live.pem"), live_key = p.dir().file("live.key");
  copy_file(certs.server_cert, live_cert);
  copy_file(certs.server_key, live_key);
  p.start_broker();
  std::string config = ten_sink_config(p.bootstrap(), kAcksAll);
  config += "t.sources.r1.ssl = true\nt.sources.r1.ssl.certificate = " + live_cert +
            "\nt.sources.r1.ssl.key = " + live_key + "\n";
  p.start_agent(config, "t", {"--metrics", "127.0.0.1:0"});
  const uint16_t port = p.agent_ports().at(0);
  REQUIRE(served_fingerprint(p, port) == fingerprint_of_file(certs.server_cert));

  // 100,000 events at 10,000/s over 2 connections (10 s: longer than the reloads take),
  // established before the reloads and kept. Joined whatever happens below.
  int sent = -1;
  TestThread sender([&] { sent = p.send({"--tls", "-c", "2", "-n", "100000", "-r", "10000"}); });
  const bool connected = eventually([&] { return p.metric("sluice_source_tls_handshakes_total") >= 3; }, 20s);
  // The renewed pair (any other certificate and its key will do) replaces the files, then SIGHUP.
  copy_file(certs.client_cert, live_cert);
  copy_file(certs.client_key, live_key);
  p.agent().signal(SIGHUP);
  const bool renewed =
      eventually([&] { return served_fingerprint(p, port) == fingerprint_of_file(certs.client_cert); }, 20s);
  // A half-written renewal (a certificate without its key) fails the reload's validation, as
  // it would fail a start: refused, and the renewed pair stays.
  copy_file(certs.stranger_cert, live_cert);
  p.agent().signal(SIGHUP);
  const bool refused = eventually(
      [&] {
        const std::string log = p.agent_log();
        return log.find("reload refused: ") != std::string::npos &&
               log.find("private key does not match the certificate") != std::string::npos;
      },
      20s);
  const std::string after_refusal = served_fingerprint(p, port);
  // Both streams still open: they went on across both reloads.
  const double streams_open = p.metric("sluice_source_connections");
  sender.join();
  INFO(p.agent_log());
  CHECK(connected);
  CHECK(renewed);
  CHECK(refused);
  CHECK(after_refusal == fingerprint_of_file(certs.client_cert));
  CHECK(streams_open == 2);
  REQUIRE(sent == 0);
  std::string report;
  CHECK(p.verify(report) == 0);
  CHECK_THAT(report, Catch::Contains("duplicates 0, missing 0") && Catch::Contains("VERIFIED"));
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE(
    "ssl.reloadInterval: the server certificate and its CA rotated on disk under traffic, no SIGHUP: a client that "
    "trusts only the new CA connects, the open streams go on, nothing lost",
    "[e2e][tls]") {
  Pipeline p;
  const CertificateFiles old_certs = make_certificates(p.dir().path());
  std::filesystem::create_directories(p.dir().file("next"));
  const CertificateFiles new_certs = make_certificates(p.dir().file("next"));
  const std::string live_cert = p.dir().file("live.pem"), live_key = p.dir().file("live.key");
  copy_file(old_certs.server_cert, live_cert);
  copy_file(old_certs.server_key, live_key);
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), kAcksAll) + "t.sources.r1.ssl = true\nt.sources.r1.ssl.certificate = " +
                    live_cert + "\nt.sources.r1.ssl.key = " + live_key + "\nt.sources.r1.ssl.reloadInterval = 200ms\n",
                "t", {"--metrics", "127.0.0.1:0"});

  // 100,000 events at 10,000/s over 2 connections that trust the old CA, open across the rotation.
  int sent = -1;
  TestThread sender([&] { sent = p.send({"--tls", "--ca", old_certs.ca, "-c", "2", "-n", "100000", "-r", "10000"}); });
  const bool connected = eventually([&] { return p.metric("sluice_source_tls_handshakes_total") >= 2; }, 20s);
  // The rotation: the key first, then the certificate (a moment of a mismatched pair, refused).
  copy_file(new_certs.server_key, live_key);
  copy_file(new_certs.server_cert, live_cert);
  const bool rotated = eventually(
      [&] { return p.metric("sluice_source_tls_reloads_total{source=\"r1\",result=\"applied\"}") >= 1; }, 20s);
  const std::string loadgen = bin("sluice-loadgen");
  const auto target = "127.0.0.1:" + std::to_string(p.agent_ports().at(0));
  // A new client that trusts only the new CA gets in; one that trusts only the old no longer does.
  const int new_client = run({loadgen, "-q", "--summary-json", p.dir().file("rotated.json"), "--first-connection",
                              "100", "-t", target, "--tls", "--ca", new_certs.ca, "-c", "1", "-n", "5000", "-d", "30s"},
                             p.dir().file("new-client.log"), 60s);
  const int old_client =
      run({loadgen, "-q", "-t", target, "--tls", "--ca", old_certs.ca, "-c", "1", "-n", "10", "-d", "5s"},
          p.dir().file("old-client.log"), 30s);
  const double streams_open = p.metric("sluice_source_connections");
  sender.join();
  INFO(p.agent_log());
  CHECK(connected);
  CHECK(rotated);
  CHECK(new_client == 0);
  CHECK(old_client != 0);
  CHECK(streams_open >= 2);  // the old streams, still open
  REQUIRE(sent == 0);
  std::string report;
  CHECK(p.verify(report, "", {"--expect", p.dir().file("rotated.json")}) == 0);
  // Both sends, whole.
  CHECK_THAT(report, Catch::Contains("from 3 connection(s)") && Catch::Contains("duplicates 0, missing 0") &&
                         Catch::Contains("VERIFIED"));
  CHECK(p.metric("sluice_source_tls_certificate_expiry_timestamp_seconds") > 0);
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}
