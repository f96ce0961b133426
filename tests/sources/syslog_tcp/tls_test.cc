// The syslog TCP source with ssl = true (RFC 5425), in-process, against clients we did not
// write (openssl s_client, rsyslog's omfwd with its OpenSSL stream driver) and, where a test must
// hold a connection open across a reload, a few lines of OpenSSL of our own.

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

#include "channels/memory/memory_channel.h"
#include "sources/syslog_tcp/syslog_tcp_source.h"
#include "tests/support/channel_contents.h"
#include "tests/support/component.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/test_certificates.h"
#include "tests/support/test_thread.h"

using namespace sluice;
using namespace sluice::syslog_tcp;
using namespace std::chrono_literals;
using sluice::test::eventually;

namespace {

struct TlsSource {
  test::TempDir dir;
  test::CertificateFiles certs = test::make_certificates(dir.path());
  MemoryChannel channel{"c", MemoryChannelConfig{10000, 1000, {}, 20}};
  std::unique_ptr<SyslogTcpSource> source;

  // ssl = true with the server's PEM files, and `properties` on top.
  void start(std::map<std::string, std::string> properties = {}) {
    properties.emplace("ssl", "true");
    if (!properties.count("keystore")) {
      properties.emplace("ssl.certificate", certs.server_cert);
      properties.emplace("ssl.key", certs.server_key);
    }
    properties.emplace("numProcessors", "1");
    properties.emplace("batchSize", "1");
    const auto component = test::syslog_source_component(properties);
    source = std::make_unique<SyslogTcpSource>(component, parse_syslog_tcp_config(component),
                                               std::vector<Channel*>{&channel});
    source->start();
  }
  std::string port() const { return std::to_string(source->listening_ports()[0]); }
  SyslogTcpCounters counters() const { return source->tcp_counters(); }
  uint64_t failures(TlsFailure why) const { return counters().tls_failures[static_cast<size_t>(why)]; }

  // openssl s_client sends `input` and closes at its end; `client` adds -cert/-key and others.
  // (quiet = false: s_client also prints the session, "New" or "Reused".)
  int s_client(const std::string& input, const std::vector<std::string>& client = {}, bool quiet = true) {
    const std::string in = dir.file("input.txt");
    std::ofstream(in, std::ios::trunc) << input;
    std::string command =
        "exec openssl s_client -connect 127.0.0.1:" + port() + (quiet ? " -quiet" : "") + " -no_ign_eof";
    for (const std::string& arg : client) command += " '" + arg + "'";
    command += " < '" + in + "'";
    return test::run({"/bin/bash", "-c", command}, dir.file("s_client.log"), 20s);
  }

  std::vector<std::string> bodies() { return test::take_all_bodies(channel); }
};

// A TLS client of our own: connects, and says which certificate the server showed.
class OurClient {
 public:
  // `before_tls`: bytes sent in the clear first (a load balancer's PROXY header).
  explicit OurClient(uint16_t port, const std::string& before_tls = "") : ctx_(SSL_CTX_new(TLS_client_method())) {
    fd_ = test::connect_loopback(port);
    if (!before_tls.empty() &&
        ::write(fd_, before_tls.data(), before_tls.size()) != static_cast<ssize_t>(before_tls.size()))
      throw std::runtime_error("cannot write the bytes before TLS");
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    connected_ = SSL_connect(ssl_) == 1;
  }
  ~OurClient() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    ::close(fd_);
  }
  bool connected() const { return connected_; }
  bool send(const std::string& line) { return SSL_write(ssl_, line.data(), static_cast<int>(line.size())) > 0; }
  void close_notify() { SSL_shutdown(ssl_); }
  std::string server_fingerprint() const { return test::fingerprint_text(SSL_get0_peer_certificate(ssl_)); }

 private:
  SSL_CTX* ctx_;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace

TEST_CASE("openssl s_client over TLS 1.2 and 1.3, LF-framed and octet-counted, lands as sent", "[source][tls]") {
  TlsSource t;
  t.start();
  CHECK(t.s_client("<13>app: one over 1.2\n<13>app: two over 1.2\n", {"-tls1_2"}) == 0);
  const std::string counted = "<13>app: three, octet-counted";
  CHECK(t.s_client(std::to_string(counted.size()) + " " + counted + "<13>app: four\n", {"-tls1_3"}) == 0);
  REQUIRE(eventually([&] { return t.counters().events_received == 4; }, 10s));
  CHECK(eventually([&] { return t.counters().connections_closed == 2; }, 10s));
  t.source->stop(Clock::now() + 5s);
  CHECK(t.bodies() ==
        std::vector<std::string>{"app: one over 1.2", "app: two over 1.2", "app: three, octet-counted", "app: four"});
  CHECK(t.counters().tls_handshakes == 2);
  for (TlsFailure why : kTlsFailures) CHECK(t.failures(why) == 0);
}

TEST_CASE("clientAuth required: no certificate, another CA's, an expired one are refused, each counted by reason",
          "[source][tls]") {
  TlsSource t;
  t.start({{"ssl.clientAuth", "required"}, {"ssl.ca", t.certs.ca}});
  const std::string line = "<13>app: with a certificate\n";
  t.s_client(line);  // (with TLS 1.3 the client may finish before the server refuses it: no exit code to check)
  CHECK(eventually([&] { return t.failures(TlsFailure::no_certificate) == 1; }, 10s));
  t.s_client(line, {"-cert", t.certs.stranger_cert, "-key", t.certs.stranger_key});
  CHECK(eventually([&] { return t.failures(TlsFailure::untrusted) == 1; }, 10s));
  t.s_client(line, {"-cert", t.certs.expired_cert, "-key", t.certs.expired_key});
  CHECK(eventually([&] { return t.failures(TlsFailure::expired) == 1; }, 10s));
  CHECK(t.s_client(line, {"-cert", t.certs.client_cert, "-key", t.certs.client_key}) == 0);
  REQUIRE(eventually([&] { return t.counters().events_received == 1; }, 10s));
  t.source->stop(Clock::now() + 5s);
  CHECK(t.bodies() == std::vector<std::string>{"app: with a certificate"});
  CHECK(t.counters().tls_handshakes == 1);
}

TEST_CASE("ssl.crl: a client whose certificate its CA revoked is refused (reason revoked), the others let in",
          "[source][tls]") {
  TlsSource t;
  t.start({{"ssl.clientAuth", "required"}, {"ssl.ca", t.certs.ca}, {"ssl.crl", t.certs.crl}});
  t.s_client("<13>app: revoked\n", {"-cert", t.certs.revoked_cert, "-key", t.certs.revoked_key});
  CHECK(eventually([&] { return t.failures(TlsFailure::revoked) == 1; }, 10s));
  CHECK(t.s_client("<13>app: still good\n", {"-cert", t.certs.client_cert, "-key", t.certs.client_key}) == 0);
  REQUIRE(eventually([&] { return t.counters().events_received == 1; }, 10s));
  t.source->stop(Clock::now() + 5s);
  CHECK(t.bodies() == std::vector<std::string>{"app: still good"});
}

TEST_CASE("without ssl.crl a revoked certificate is let in: revocation is checked only when a CRL is given",
          "[source][tls]") {
  TlsSource t;
  t.start({{"ssl.clientAuth", "required"}, {"ssl.ca", t.certs.ca}});
  CHECK(t.s_client("<13>app: revoked, unchecked\n", {"-cert", t.certs.revoked_cert, "-key", t.certs.revoked_key}) == 0);
  REQUIRE(eventually([&] { return t.counters().events_received == 1; }, 10s));
  t.source->stop(Clock::now() + 5s);
  CHECK(t.failures(TlsFailure::revoked) == 0);
}

TEST_CASE("ssl.maxHandshakes: clients that never finish their handshakes hold at most that many, the next waits",
          "[source][tls]") {
  TlsSource t;
  t.start({{"ssl.maxHandshakes", "2"}, {"ssl.handshakeTimeout", "1s"}});
  // Two connections that start a handshake and never finish it (a ClientHello's first bytes).
  const int a = test::connect_loopback(t.source->listening_ports()[0]);
  const int b = test::connect_loopback(t.source->listening_ports()[0]);
  for (int fd : {a, b}) REQUIRE(::write(fd, "\x16\x03\x01", 3) == 3);
  // A real client now: it can only be served once one of the two has timed out and freed a slot.
  std::atomic<uint64_t> timeouts_when_served{UINT64_MAX};
  test::TestThread client([&] {
    OurClient c(t.source->listening_ports()[0]);
    if (c.connected()) timeouts_when_served = t.failures(TlsFailure::timeout);
    c.send("<13>app: after a slot freed\n");
    c.close_notify();
  });
  client.join();
  CHECK(timeouts_when_served >= 1);
  CHECK(timeouts_when_served != UINT64_MAX);
  REQUIRE(eventually([&] { return t.counters().events_received == 1; }, 10s));
  CHECK(eventually([&] { return t.failures(TlsFailure::timeout) == 2; }, 10s));
  t.source->stop(Clock::now() + 5s);
  CHECK(t.bodies() == std::vector<std::string>{"app: after a slot freed"});
  for (int fd : {a, b}) ::close(fd);
}

TEST_CASE("clientAuth optional: a client without a certificate is let in, one whose certificate fails is not",
          "[source][tls]") {
  TlsSource t;
  t.start({{"ssl.clientAuth", "optional"}, {"ssl.ca", t.certs.ca}});
  CHECK(t.s_client("<13>app: no certificate\n") == 0);
  CHECK(eventually([&] { return t.counters().events_received == 1; }, 10s));
  t.s_client("<13>app: a stranger\n", {"-cert", t.certs.stranger_cert, "-key", t.certs.stranger_key});
  CHECK(eventually([&] { return t.failures(TlsFailure::untrusted) == 1; }, 10s));
  CHECK(t.s_client("<13>app: verified\n", {"-cert", t.certs.client_cert, "-key", t.certs.client_key}) == 0);
  CHECK(eventually([&] { return t.counters().events_received == 2; }, 10s));
  t.source->stop(Clock::now() + 5s);
  CHECK(t.bodies() == std::vector<std::string>{"app: no certificate", "app: verified"});
}

TEST_CASE("a TLS 1.2 client resuming its session with a client certificate is let in again", "[source][tls]") {
  TlsSource t;
  t.start({{"ssl.clientAuth", "required"}, {"ssl.ca", t.certs.ca}});
  const std::vector<std::string> client{"-tls1_2", "-cert", t.certs.client_cert, "-key", t.certs.client_key};
  std::vector<std::string> first = client, second = client;
  first.insert(first.end(), {"-sess_out", t.dir.file("session.pem")});
  second.insert(second.end(), {"-sess_in", t.dir.file("session.pem")});
  CHECK(t.s_client("<13>app: first\n", first) == 0);
  REQUIRE(eventually([&] { return t.counters().events_received == 1; }, 10s));
  CHECK(t.s_client("<13>app: resumed\n", second, /*quiet=*/false) == 0);
  CHECK(eventually([&] { return t.counters().events_received == 2; }, 10s));
  CHECK_THAT(test::read_file(t.dir.file("s_client.log")), Catch::Contains("Reused, TLSv1.2"));
  for (TlsFailure why : kTlsFailures) CHECK(t.failures(why) == 0);
}

TEST_CASE("allowedPeers: a fingerprint lets a self-signed client in without a CA, others are not allowed",
          "[source][tls]") {
  TlsSource t;
  t.start({{"ssl.clientAuth", "required"},
           {"ssl.ca", t.certs.ca},
           {"ssl.allowedPeers", test::fingerprint_of_file(t.certs.self_signed_cert) + " Other.Example"}});
  const std::string line = "<13>app: pinned\n";
  // Signed by our CA, but neither its fingerprint nor its names are listed.
  t.s_client(line, {"-cert", t.certs.client_cert, "-key", t.certs.client_key});
  CHECK(eventually([&] { return t.failures(TlsFailure::not_allowed) == 1; }, 10s));
  CHECK(t.s_client(line, {"-cert", t.certs.self_signed_cert, "-key", t.certs.self_signed_key}) == 0);
  REQUIRE(eventually([&] { return t.counters().events_received == 1; }, 10s));
  t.source->stop(Clock::now() + 5s);
  CHECK(t.bodies() == std::vector<std::string>{"app: pinned"});

  TlsSource by_name;  // a name matches the CN or a DNS subjectAltName, whatever its case
  by_name.start({{"ssl.clientAuth", "required"}, {"ssl.ca", by_name.certs.ca}, {"ssl.allowedPeers", "CLIENT.example"}});
  CHECK(by_name.s_client(line, {"-cert", by_name.certs.client_cert, "-key", by_name.certs.client_key}) == 0);
  CHECK(eventually([&] { return by_name.counters().events_received == 1; }, 10s));
}

TEST_CASE(
    "plain text on a TLS port is refused, and a handshake sent a byte at a time times out without holding "
    "the io thread",
    "[source][tls][faults]") {
  TlsSource t;
  t.start({{"ssl.handshakeTimeout", "8s"}});
  const int plain = test::connect_loopback(static_cast<uint16_t>(std::stoi(t.port())));
  REQUIRE(::send(plain, "<13>app: not TLS\n", 17, MSG_NOSIGNAL) == 17);
  CHECK(eventually([&] { return t.failures(TlsFailure::protocol) == 1; }, 10s));
  ::close(plain);

  // A record header announcing a ClientHello of 512 bytes, then one byte every 100 ms.
  const int slow = test::connect_loopback(static_cast<uint16_t>(std::stoi(t.port())));
  std::atomic<bool> done{false};
  REQUIRE(::send(slow, "\x16\x03\x01\x02\x00", 5, MSG_NOSIGNAL) == 5);
  test::TestThread trickle([&] {  // (no assertion in here: Catch2 is not thread-safe)
    while (!done && ::send(slow, "\x01", 1, MSG_NOSIGNAL) == 1)
      std::this_thread::sleep_for(100ms);  // the load's shape, not a synchronisation
  });
  // Meanwhile the same (only) io thread serves a client that does not dawdle.
  CHECK(t.s_client("<13>app: not held up\n") == 0);
  CHECK(eventually([&] { return t.counters().events_received == 1; }, 10s));
  CHECK(t.failures(TlsFailure::timeout) == 0);  // still trickling, and the other client was served
  CHECK(eventually([&] { return t.failures(TlsFailure::timeout) == 1; }, 15s));
  done = true;
  trickle.join();
  ::close(slow);
  t.source->stop(Clock::now() + 5s);
  CHECK(t.bodies() == std::vector<std::string>{"app: not held up"});
}

TEST_CASE("behind a PROXY balancer the header comes before the TLS handshake and names the client",
          "[source][tls][proxy]") {
  TlsSource t;
  t.start({{"proxyProtocol", "v1"}, {"proxyTrustedFrom", "127.0.0.1"}, {"clientIPHeader", "clientIP"}});
  {
    OurClient client(t.source->listening_ports()[0], "PROXY TCP4 192.0.2.7 127.0.0.1 51234 514\r\n");
    REQUIRE(client.connected());
    REQUIRE(client.send("<13>app: through the balancer\n"));
    client.close_notify();
  }
  {
    OurClient direct(t.source->listening_ports()[0]);  // a TLS client without the header
    CHECK_FALSE(direct.connected());
  }
  REQUIRE(eventually([&] { return t.counters().events_received == 1; }, 10s));
  t.source->stop(Clock::now() + 5s);
  const std::vector<std::string> events = test::take_all(t.channel, [](const EventBatch& b, const EventRecord& e) {
    return std::string(b.client_ip(e)) + " " + std::string(b.body(e));
  });
  CHECK(events == std::vector<std::string>{"192.0.2.7 app: through the balancer"});
  CHECK(t.counters().connections_refused_proxy == 1);
  CHECK(t.counters().tls_handshakes == 1);
}

TEST_CASE("an encrypted key with ssl.keyPassword, and Flume's PKCS12 keystore, both serve", "[source][tls]") {
  TlsSource encrypted;
  encrypted.start({{"ssl.key", encrypted.certs.server_key_encrypted}, {"ssl.keyPassword", "secret"}});
  CHECK(encrypted.s_client("<13>app: encrypted key\n") == 0);
  CHECK(eventually([&] { return encrypted.counters().events_received == 1; }, 10s));

  TlsSource keystore;
  keystore.start({{"keystore", keystore.certs.keystore}, {"keystore-password", "secret"}, {"keystore-type", "PKCS12"}});
  CHECK(keystore.s_client("<13>app: keystore\n") == 0);
  CHECK(eventually([&] { return keystore.counters().events_received == 1; }, 10s));
}

TEST_CASE("TLS settings that cannot work are refused at start, naming the property", "[source][tls][config]") {
  TlsSource t;
  const auto refused = [&](std::map<std::string, std::string> properties, const std::string& message) {
    const auto component = test::syslog_source_component(properties);
    INFO(message);
    CHECK_THROWS_WITH(
        [&] {
          const SyslogTcpConfig config = parse_syslog_tcp_config(component);
          SyslogTcpSource source(component, config, {&t.channel});
        }(),
        Catch::Contains(message));
  };
  refused({{"ssl.certificate", t.certs.server_cert}}, "ssl.certificate: is set but ssl is false");
  refused({{"ssl", "true"}}, "there is no certificate");
  refused({{"ssl", "true"}, {"ssl.certificate", t.certs.server_cert}}, "ssl.key: is missing");
  refused({{"ssl", "true"}, {"ssl.certificate", t.certs.server_cert}, {"ssl.key", t.certs.client_key}},
          "the private key does not match the certificate");
  refused({{"ssl", "true"}, {"ssl.certificate", t.dir.file("nothing.pem")}, {"ssl.key", t.certs.server_key}},
          "ssl.certificate: cannot load");
  refused({{"ssl", "true"}, {"ssl.certificate", t.certs.server_cert}, {"ssl.key", t.certs.server_key_encrypted}},
          "give ssl.keyPassword");
  refused({{"ssl", "true"}, {"keystore", t.certs.keystore}, {"keystore-password", "wrong"}}, "wrong password");
  refused({{"ssl", "true"},
           {"ssl.certificate", t.certs.server_cert},
           {"ssl.key", t.certs.server_key},
           {"ssl.clientAuth", "required"}},
          "needs something to verify client certificates against");
  refused({{"ssl", "true"},
           {"ssl.certificate", t.certs.server_cert},
           {"ssl.key", t.certs.server_key},
           {"ssl.allowedPeers", "client.example"}},
          "needs ssl.clientAuth = optional or required");
  refused({{"ssl", "true"},
           {"ssl.certificate", t.certs.server_cert},
           {"ssl.key", t.certs.server_key},
           {"ssl.protocols", "TLSv1.1"}},
          "leaves no TLS version");
  refused({{"ssl", "true"},
           {"ssl.certificate", t.certs.server_cert},
           {"ssl.key", t.certs.server_key},
           {"include-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA999"}},
          "include-cipher-suites: names TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA999, a cipher suite OpenSSL does not know");
  refused({{"ssl", "true"},
           {"ssl.certificate", t.certs.server_cert},
           {"ssl.key", t.certs.server_key},
           {"include-cipher-suites", "TLS_AES_128_GCM_SHA256"},
           {"ssl.ciphers", "ECDHE+AESGCM"}},
          "include-cipher-suites: and ssl.ciphers are both set");
  refused({{"ssl", "true"},
           {"ssl.certificate", t.certs.server_cert},
           {"ssl.key", t.certs.server_key},
           {"include-cipher-suites", "TLS_AES_128_GCM_SHA256"},
           {"ssl.protocols", "TLSv1.2"}},
          "include-cipher-suites: leaves no cipher suite for the TLS versions in ssl.protocols");
  refused({{"include-cipher-suites", "TLS_AES_128_GCM_SHA256"}}, "include-cipher-suites: is set but ssl is false");
}

TEST_CASE("Flume's exclude-cipher-suites: the excluded TLS 1.3 suites are refused, the others served",
          "[source][tls]") {
  TlsSource t;
  t.start({{"exclude-cipher-suites", "TLS_AES_256_GCM_SHA384 TLS_CHACHA20_POLY1305_SHA256"}});
  const std::string line = "<13>app: a suite left\n";
  CHECK(t.s_client(line, {"-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384"}) != 0);
  CHECK(t.s_client(line, {"-tls1_3", "-ciphersuites", "TLS_AES_128_GCM_SHA256"}) == 0);
  REQUIRE(eventually([&] { return t.counters().events_received == 1; }, 10s));
  t.source->stop(Clock::now() + 5s);
  CHECK(t.bodies() == std::vector<std::string>{"app: a suite left"});
  CHECK(t.failures(TlsFailure::protocol) == 1);
}

TEST_CASE("Flume's include-cipher-suites: only its suites are offered, a TLS version left without one is off",
          "[source][tls]") {
  TlsSource t;
  t.start({{"include-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}});
  const std::string line = "<13>app: an allowed suite\n";
  CHECK(t.s_client(line, {"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"}) != 0);
  CHECK(t.s_client(line, {"-tls1_3"}) != 0);
  CHECK(t.s_client(line, {"-tls1_2", "-cipher", "ECDHE-ECDSA-AES256-GCM-SHA384"}) == 0);
  REQUIRE(eventually([&] { return t.counters().events_received == 1; }, 10s));
  CHECK(eventually([&] { return t.counters().connections_closed == 3; }, 10s));
  t.source->stop(Clock::now() + 5s);
  CHECK(t.bodies() == std::vector<std::string>{"app: an allowed suite"});
  CHECK(t.counters().tls_handshakes == 1);
  CHECK(t.failures(TlsFailure::protocol) == 2);
}

TEST_CASE("SIGHUP's reload: new connections get the new certificate, an established one goes on", "[source][tls]") {
  TlsSource t;
  t.start();
  const auto port = static_cast<uint16_t>(std::stoi(t.port()));
  const std::string before = test::fingerprint_of_file(t.certs.server_cert);
  OurClient established(port);
  REQUIRE(established.connected());
  CHECK(established.server_fingerprint() == before);
  REQUIRE(established.send("<13>app: before the reload\n"));
  test::make_certificates(t.dir.path());  // new keys and certificates in the same files
  const std::string after = test::fingerprint_of_file(t.certs.server_cert);
  REQUIRE(after != before);
  t.source->reload_credentials();
  OurClient fresh(port);
  REQUIRE(fresh.connected());
  CHECK(fresh.server_fingerprint() == after);
  REQUIRE(established.send("<13>app: after the reload, same connection\n"));
  REQUIRE(fresh.send("<13>app: new connection\n"));
  established.close_notify();
  fresh.close_notify();
  CHECK(eventually([&] { return t.counters().events_received == 3; }, 10s));
  // A broken file: the running certificate stays.
  std::ofstream(t.certs.server_key, std::ios::trunc) << "not a key\n";
  t.source->reload_credentials();
  OurClient still(port);
  CHECK(still.connected());
  CHECK(still.server_fingerprint() == after);
}

TEST_CASE(
    "ssl.reloadInterval: files rotated on disk serve without SIGHUP: a new certificate, a new client CA, a "
    "broken one is refused and counted",
    "[source][tls]") {
  TlsSource t;
  const test::CertificateFiles old_certs = t.certs;
  std::filesystem::create_directories(t.dir.path() + "/next");
  const test::CertificateFiles new_certs = test::make_certificates(t.dir.path() + "/next");
  const std::string live_cert = t.dir.file("live.pem"), live_key = t.dir.file("live.key"),
                    live_ca = t.dir.file("live-ca.pem");
  const auto install = [&](const test::CertificateFiles& c) {
    std::filesystem::copy_file(c.server_cert, live_cert, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(c.server_key, live_key, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(c.ca, live_ca, std::filesystem::copy_options::overwrite_existing);
  };
  install(old_certs);
  t.start({{"ssl.certificate", live_cert},
           {"ssl.key", live_key},
           {"ssl.ca", live_ca},
           {"ssl.clientAuth", "required"},
           {"ssl.reloadInterval", "100ms"}});
  const auto port = static_cast<uint16_t>(std::stoi(t.port()));
  const auto client = [](const test::CertificateFiles& c) {
    return std::vector<std::string>{"-cert", c.client_cert, "-key", c.client_key};
  };
  CHECK(t.s_client("<13>app: an old client before\n", client(old_certs)) == 0);
  REQUIRE(eventually([&] { return t.counters().events_received == 1; }, 10s));
  OurClient established(port);  // before the rotation; its session goes on after it
  const std::string old_fingerprint = established.server_fingerprint();

  install(new_certs);
  REQUIRE(eventually(
      [&] { return OurClient(port).server_fingerprint() == test::fingerprint_of_file(new_certs.server_cert); }, 10s));
  CHECK(t.counters().tls_reloads_applied >= 1);
  CHECK(old_fingerprint == test::fingerprint_of_file(old_certs.server_cert));
  // The new CA's clients are let in, the old one's no longer.
  CHECK(t.s_client("<13>app: a new client after\n", client(new_certs)) == 0);
  REQUIRE(eventually([&] { return t.counters().events_received == 2; }, 10s));
  t.s_client("<13>app: an old client after\n", client(old_certs));
  CHECK(eventually([&] { return t.failures(TlsFailure::untrusted) >= 1; }, 10s));

  // Half a rotation (a key that is not the certificate's): refused, the new pair stays.
  const uint64_t refused_before = t.counters().tls_reloads_refused;
  std::filesystem::copy_file(old_certs.server_key, live_key, std::filesystem::copy_options::overwrite_existing);
  REQUIRE(eventually([&] { return t.counters().tls_reloads_refused >= refused_before + 1; }, 10s));
  CHECK(OurClient(port).server_fingerprint() == test::fingerprint_of_file(new_certs.server_cert));
  CHECK(t.counters().events_received == 2);
}

TEST_CASE("rsyslog omfwd over TLS (its OpenSSL driver, x509 with a client certificate), LF and octet-counted",
          "[source][tls][senders]") {
  const std::string rsyslog = test::source_path("build/peers/rsyslog");
  INFO("rsyslog is unpacked by `bash tests/peers/unpack.sh rsyslog` (.ci/run does it)");
  REQUIRE(std::ifstream(rsyslog + "/usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_ossl.so").good());
  TlsSource t;
  t.start({{"ssl.clientAuth", "required"}, {"ssl.ca", t.certs.ca}, {"ssl.allowedPeers", "client.example"}});
  constexpr int kLines = 100;
  {
    std::ofstream lines(t.dir.file("lines.txt"));
    for (int i = 0; i < kLines; ++i) lines << "rsyslog tls line " << i << "\n";
  }
  std::ofstream(t.dir.file("rsyslog.conf"))
      << "global(workDirectory=\"" << t.dir.path() << "\" DefaultNetstreamDriverCAFile=\"" << t.certs.ca
      << "\" DefaultNetstreamDriverCertFile=\"" << t.certs.client_cert << "\" DefaultNetstreamDriverKeyFile=\""
      << t.certs.client_key << "\")\n"
      << "module(load=\"imfile\")\n"
      << "input(type=\"imfile\" file=\"" << t.dir.file("lines.txt") << "\" tag=\"sluicetest:\" ruleset=\"out\")\n"
      << "ruleset(name=\"out\") {\n"
      << "  action(type=\"omfwd\" target=\"127.0.0.1\" port=\"" << t.port()
      << "\" protocol=\"tcp\" StreamDriver=\"ossl\" StreamDriverMode=\"1\" StreamDriverAuthMode=\"x509/name\""
      << " StreamDriverPermittedPeers=\"localhost\")\n"
      << "  action(type=\"omfwd\" target=\"127.0.0.1\" port=\"" << t.port()
      << "\" protocol=\"tcp\" TCP_Framing=\"octet-counted\" StreamDriver=\"ossl\" StreamDriverMode=\"1\""
      << " StreamDriverAuthMode=\"x509/name\" StreamDriverPermittedPeers=\"localhost\")\n"
      << "}\n";
  test::ChildProcess rsyslogd({rsyslog + "/usr/sbin/rsyslogd", "-n", "-f", t.dir.file("rsyslog.conf"), "-i",
                               t.dir.file("rsyslogd.pid"), "-M", rsyslog + "/usr/lib/x86_64-linux-gnu/rsyslog"},
                              t.dir.file("rsyslogd.log"));
  const bool all_arrived = eventually([&] { return t.counters().events_received >= 2 * kLines; }, 30s);
  rsyslogd.signal(SIGTERM);
  rsyslogd.wait(10s);
  t.source->stop(Clock::now() + 5s);
  INFO(test::read_file(t.dir.file("rsyslogd.log")));
  REQUIRE(all_arrived);
  const SyslogTcpCounters c = t.counters();
  CHECK(c.events_received == 2 * kLines);
  CHECK(c.per_port[0].octet_counted == kLines);  // the second action's frames
  CHECK(c.tls_handshakes >= 2);
  std::vector<std::string> bodies = t.bodies(), expected;
  for (int i = 0; i < kLines; ++i)
    for (int copy = 0; copy < 2; ++copy) expected.push_back("sluicetest: rsyslog tls line " + std::to_string(i));
  std::sort(bodies.begin(), bodies.end());
  std::sort(expected.begin(), expected.end());
  CHECK(bodies == expected);
}

TEST_CASE("syslog-ng network(transport(tls)) and syslog(transport(tls)), with a client certificate, land as sent",
          "[source][tls][senders]") {
  const std::string root = test::source_path("build/peers/syslog-ng");
  INFO("syslog-ng is unpacked by `bash tests/peers/unpack.sh syslog-ng` (.ci/run does it)");
  REQUIRE(std::ifstream(root + "/usr/sbin/syslog-ng").good());
  TlsSource t;
  t.start({{"ssl.clientAuth", "required"}, {"ssl.ca", t.certs.ca}});
  constexpr int kLines = 100;
  {
    std::ofstream lines(t.dir.file("lines.txt"));
    for (int i = 0; i < kLines; ++i) lines << "syslog-ng tls line " << i << "\n";
  }
  // network(): RFC 3164 lines, LF-framed; syslog(): RFC 5424, octet-counted (RFC 5425).
  const std::string tls = "tls(ca-file(\"" + t.certs.ca + "\") cert-file(\"" + t.certs.client_cert + "\") key-file(\"" +
                          t.certs.client_key + "\") peer-verify(required-trusted))";
  std::ofstream(t.dir.file("syslog-ng.conf"))
      << "@version: 3.38\n"
      << "options { stats-freq(0); };\n"
      << "source s_file { file(\"" << t.dir.file("lines.txt")
      << "\" follow-freq(0.1) flags(no-parse) program-override(\"sluicetest\")); };\n"
      << "destination d_lines { network(\"localhost\" ip-protocol(4) port(" << t.port() << ") transport(\"tls\") "
      << tls << " persist-name(\"lines\")); };\n"
      << "destination d_counted { syslog(\"localhost\" ip-protocol(4) port(" << t.port() << ") transport(\"tls\") "
      << tls << " persist-name(\"counted\")); };\n"
      << "log { source(s_file); destination(d_lines); destination(d_counted); };\n";
  const std::string libraries = root + "/usr/lib/x86_64-linux-gnu:" + root + "/usr/lib/syslog-ng";
  test::ChildProcess syslog_ng(
      {"/usr/bin/env", "LD_LIBRARY_PATH=" + libraries, root + "/usr/sbin/syslog-ng", "-F", "--no-caps", "-f",
       t.dir.file("syslog-ng.conf"), "-R", t.dir.file("persist"), "-p", t.dir.file("pid"), "-c", t.dir.file("ctl"),
       "--module-path", root + "/usr/lib/syslog-ng/3.38"},
      t.dir.file("syslog-ng.log"));
  const bool all_arrived = eventually([&] { return t.counters().events_received >= 2 * kLines; }, 30s);
  syslog_ng.signal(SIGTERM);
  syslog_ng.wait(10s);
  t.source->stop(Clock::now() + 5s);
  INFO(test::read_file(t.dir.file("syslog-ng.log")));
  REQUIRE(all_arrived);
  const SyslogTcpCounters c = t.counters();
  CHECK(c.events_received == 2 * kLines);
  CHECK(c.per_port[0].octet_counted == kLines);  // syslog()'s frames
  CHECK(c.per_port[0].invalid == 0);
  std::vector<std::string> bodies = t.bodies();
  INFO("first bodies: " << (bodies.empty() ? "" : bodies.front()) << " | " << (bodies.empty() ? "" : bodies.back()));
  const auto ends_with_line = [](const std::string& body, int i) {
    const std::string line = "syslog-ng tls line " + std::to_string(i);
    return body.size() >= line.size() && body.compare(body.size() - line.size(), line.size(), line) == 0;
  };
  for (int i = 0; i < kLines; ++i)
    CHECK(std::count_if(bodies.begin(), bodies.end(), [&](const std::string& b) { return ends_with_line(b, i); }) == 2);
}
