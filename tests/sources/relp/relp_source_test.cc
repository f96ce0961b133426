// type = relp in-process: a RELP client of our own (to hold replies back and look at them) and
// rsyslog's omrelp (librelp's client, numbered messages through a disk-assisted queue).

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <thread>

#include "channels/memory/memory_channel.h"
#include "sources/net/stream_server.h"
#include "sources/relp/relp_source.h"
#include "tests/support/channel_contents.h"
#include "tests/support/component.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/test_certificates.h"
#include "tests/support/test_thread.h"

using namespace sluice;
using namespace std::chrono_literals;
using sluice::test::eventually;

namespace {

struct RelpSource {
  MemoryChannel channel{"c", MemoryChannelConfig{100000, 1000, {}, 20}};
  std::unique_ptr<Source> source;

  void start(std::map<std::string, std::string> properties = {}) {
    properties.emplace("host", "127.0.0.1");
    properties.emplace("ports", "0");
    properties.emplace("numProcessors", "1");
    properties.emplace("batchSize", "1");
    SharedState shared;
    BuildContext context{shared};
    source = relp::kRelpSourceSpec.make_source(test::component(config::Kind::source, "r", "relp", properties),
                                               {&channel}, context);
    source->start();
  }
  uint16_t port() const { return source->listening_ports()[0]; }
  net::StreamCounters counters() const { return static_cast<const net::StreamServer&>(*source).tcp_counters(); }
  // Takes everything queued and commits it: the sink's delivery, as far as the source can tell.
  std::vector<std::string> deliver() { return test::take_all_bodies(channel); }
};

// A RELP client of our own: frames commands, reads what the server answers.
class RelpClient {
 public:
  explicit RelpClient(uint16_t port) : fd_(test::connect_loopback(port)) {}
  ~RelpClient() { ::close(fd_); }
  // "TXNR COMMAND DATALEN[ DATA]\n"
  static std::string frame(uint32_t txnr, std::string_view command, std::string_view data) {
    std::string out = std::to_string(txnr) + " " + std::string(command) + " " + std::to_string(data.size());
    if (!data.empty()) (out += " ") += data;
    return out + "\n";
  }
  void send(uint32_t txnr, std::string_view command, std::string_view data) {
    const std::string bytes = frame(txnr, command, data);
    REQUIRE(::write(fd_, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  }
  // `open` (txnr 1) with librelp's offers, and its answer read.
  void open();
  // Everything the server sent within `wait` (stops early once `until` has arrived).
  std::string read(std::chrono::milliseconds wait, std::string_view until = {}) {
    const auto deadline = Clock::now() + wait;
    while (Clock::now() < deadline && (until.empty() || received_.find(until) == std::string::npos)) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      received_.append(buf, static_cast<size_t>(n));
    }
    return received_;
  }
  bool closed() const { return closed_; }

 private:
  int fd_;
  std::string received_;
  bool closed_ = false;
};

bool accepts_connections(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return connected;
}

const std::string kOffers = "relp_version=0\nrelp_software=test\ncommands=syslog";

void RelpClient::open() {
  send(1, "open", kOffers);
  read(std::chrono::seconds(5), "commands=syslog\n");
}

}  // namespace

TEST_CASE("RELP: a message is answered only once its event is committed, in order, and close after", "[source][relp]") {
  RelpSource r;
  r.start();
  RelpClient client(r.port());
  client.send(1, "open", kOffers);
  CHECK_THAT(client.read(5s, "commands=syslog\n"),
             Catch::StartsWith("1 rsp ") && Catch::Contains("200 OK\nrelp_version=0"));
  client.send(2, "syslog", "<13>Dec  1 10:00:00 host app: one");
  client.send(3, "syslog", "<13>Dec  1 10:00:00 host app: two");
  REQUIRE(eventually([&] { return r.counters().events_received == 2; }, 5s));
  // In the channel, not delivered: no reply may come.
  CHECK(client.read(300ms).find("2 rsp") == std::string::npos);
  CHECK(r.deliver() == std::vector<std::string>{"app: one", "app: two"});
  CHECK_THAT(client.read(5s, "3 rsp 6 200 OK\n"), Catch::EndsWith("2 rsp 6 200 OK\n3 rsp 6 200 OK\n"));
  client.send(4, "close", "");
  CHECK_THAT(client.read(5s, "4 rsp 0\n"), Catch::EndsWith("4 rsp 0\n"));
  client.read(5s, "never sent");  // until the server closes the session, as librelp's does after close
  CHECK(client.closed());
  CHECK(r.counters().events_acknowledged == 2);
  r.source->stop(Clock::now() + 5s);
}

TEST_CASE("RELP keeps a long message whole: eventSize defaults to maxDataSize", "[source][relp]") {
  RelpSource r;
  r.start();
  RelpClient client(r.port());
  client.open();
  const std::string message = "<13>app: " + std::string(20000, 'x');
  client.send(2, "syslog", message);
  REQUIRE(eventually([&] { return r.counters().events_received == 1; }, 5s));
  CHECK(r.counters().events_truncated == 0);
  CHECK(r.deliver() == std::vector<std::string>{message.substr(4)});
  r.source->stop(Clock::now() + 5s);
}

TEST_CASE("RELP at stop: replies still go out while the drain lasts, then serverclose", "[source][relp]") {
  RelpSource r;
  r.start();
  RelpClient client(r.port());
  client.open();
  client.send(2, "syslog", "<13>app: before the stop");
  REQUIRE(eventually([&] { return r.counters().events_received == 1; }, 5s));
  // The sink delivers once the stop has begun (the listener is closed): the drain must wait for it.
  const uint16_t port = r.port();
  test::TestThread sink([&] {
    eventually([&] { return !accepts_connections(port); }, 5s);
    r.deliver();
  });
  r.source->stop(Clock::now() + 5s);
  sink.join();
  CHECK_THAT(client.read(5s, "serverclose"), Catch::EndsWith("2 rsp 6 200 OK\n0 serverclose 0\n"));
}

TEST_CASE("RELP past maxConnectionAge: read no more, its replies go out, then serverclose", "[source][relp]") {
  RelpSource r;
  r.start({{"maxConnectionAge", "300ms"}, {"maxConnectionAgeJitter", "1ms"}});
  RelpClient client(r.port());
  client.open();
  client.send(2, "syslog", "<13>app: before its age");
  REQUIRE(eventually([&] { return r.counters().events_received == 1; }, 5s));
  REQUIRE(eventually([&] { return r.counters().connections_aged == 1; }, 5s));
  client.send(3, "syslog", "<13>app: after its age");  // not read: unanswered, its sender sends it again
  // Its reply waits for the event's delivery, and so does the farewell.
  CHECK(client.read(300ms).find("serverclose") == std::string::npos);
  CHECK(r.deliver() == std::vector<std::string>{"app: before its age"});
  CHECK_THAT(client.read(5s, "serverclose"), Catch::EndsWith("2 rsp 6 200 OK\n0 serverclose 0\n"));
  client.read(5s, "never sent");
  CHECK(client.closed());
  CHECK(r.counters().events_received == 1);
  r.source->stop(Clock::now() + 5s);
}

TEST_CASE("RELP: a broken stream is counted and ended with serverclose, ackAfter = channel needs a file channel",
          "[source][relp][config]") {
  RelpSource r;
  r.start();
  RelpClient client(r.port());
  client.open();
  const std::string garbage = "<13>this is plain syslog\n";
  const int plain = test::connect_loopback(r.port());
  REQUIRE(::write(plain, garbage.data(), garbage.size()) > 0);
  CHECK(eventually([&] { return r.counters().protocol_errors == 1; }, 5s));
  pollfd p{plain, POLLIN, 0};
  char reply[64];
  REQUIRE(::poll(&p, 1, 5000) == 1);
  CHECK(std::string(reply, static_cast<size_t>(std::max<ssize_t>(0, ::read(plain, reply, sizeof reply)))) ==
        "0 serverclose 0\n");
  ::close(plain);
  r.source->stop(Clock::now() + 5s);

  RelpSource refused;
  CHECK_THROWS_WITH(refused.start({{"ackAfter", "channel"}}),
                    Catch::Contains("ackAfter: = channel needs channels that write every put to disk"));
  CHECK_THROWS_WITH(refused.start({{"framing", "auto"}}), Catch::Contains("framing: means nothing for RELP"));
  CHECK_THROWS_WITH(refused.start({{"ackAfterr", "kafka"}}), Catch::Contains("unknown property"));
}

TEST_CASE("RELP over TLS (ssl = true): openssl s_client's session is answered after the commit, then closed",
          "[source][relp][tls]") {
  test::TempDir dir;
  const test::CertificateFiles certs = test::make_certificates(dir.path());
  RelpSource r;
  r.start({{"ssl", "true"}, {"ssl.certificate", certs.server_cert}, {"ssl.key", certs.server_key}});
  const auto frame = &RelpClient::frame;
  std::ofstream(dir.file("session.txt")) << frame(1, "open", kOffers) << frame(2, "syslog", "<13>app: over TLS")
                                         << frame(3, "close", "");
  // -ign_eof: s_client reads on after its input ends, until the server closes the session.
  int exit_code = -1;
  test::TestThread client([&] {
    exit_code = test::run({"/bin/bash", "-c",
                           "exec openssl s_client -quiet -ign_eof -connect 127.0.0.1:" + std::to_string(r.port()) +
                               " < '" + dir.file("session.txt") + "'"},
                          dir.file("replies.txt"), 20s);
  });
  const bool received = eventually([&] { return r.counters().events_received == 1; }, 10s);
  const std::string before = test::read_file(dir.file("replies.txt"));
  const std::vector<std::string> delivered = r.deliver();
  client.join();
  REQUIRE(received);
  const std::string replies = test::read_file(dir.file("replies.txt"));
  INFO(replies);
  CHECK(before.find("2 rsp") == std::string::npos);  // not before the commit
  CHECK(delivered == std::vector<std::string>{"app: over TLS"});
  CHECK_THAT(replies, Catch::Contains("200 OK\nrelp_version=0") && Catch::Contains("2 rsp 6 200 OK\n3 rsp 0\n"));
  CHECK(exit_code == 0);
  CHECK(r.counters().tls_handshakes == 1);
  r.source->stop(Clock::now() + 5s);
}

TEST_CASE("RELP: a client that floods us and never reads its replies is no longer read once 256 KiB waits unsent",
          "[source][relp]") {
  RelpSource r;
  r.start();
  // Empty syslog frames: answered at once, needing no event. The client never reads, so every
  // answer waits; without a bound they would pile up in the agent without end.
  const int fd = test::connect_loopback(r.port());
  const timeval blocked_for{2, 0};  // a send blocked this long: the agent stopped reading us
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &blocked_for, sizeof blocked_for);
  const std::string open = RelpClient::frame(1, "open", kOffers);
  REQUIRE(::send(fd, open.data(), open.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(open.size()));
  std::string chunk;
  for (uint32_t txnr = 2; chunk.size() < 64 * 1024; ++txnr) chunk += RelpClient::frame(txnr, "syslog", "");
  constexpr uint64_t kCap = 256ull << 20;  // far beyond what kernel buffers and the bound hold
  uint64_t written = 0;
  while (written < kCap) {
    const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
    if (n <= 0) break;  // EAGAIN after 2 s blocked
    written += static_cast<uint64_t>(n);
  }
  INFO("written " << written << " bytes; read " << r.counters().bytes_received << ", protocol errors "
                  << r.counters().protocol_errors << ", closed " << r.counters().connections_closed);
  CHECK(written < 64ull << 20);
  CHECK(eventually([&] { return r.counters().reading_paused >= 1; }, 10s));
  ::close(fd);
  r.source->stop(Clock::now() + 5s);
}
