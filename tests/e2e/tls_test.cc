// Syslog over TLS end to end: sluice-loadgen --tls into the agent's TLS source, Kafka read back
// by the verifier. TLS must lose nothing plain TCP does not: including the end of each stream,
// when a sender that never reads closes its connection.

#include <catch2/catch.hpp>

#include "tests/support/pipeline.h"
#include "tests/support/test_certificates.h"

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
