// The syslog TCP source end to end in-process: bytes on a socket in, events in a channel
// out, for the Flume-parity options (keepFields, header names, charsets), framing over TCP,
// idle timeouts and the per-port counters.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <thread>

#include "agent/api/event_json.h"
#include "channels/memory/memory_channel.h"
#include "sources/syslog/charset.h"
#include "sources/syslog/syslog_parser.h"
#include "sources/syslog_tcp/syslog_tcp_source.h"
#include "tests/support/component.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/socket_io.h"

using namespace sluice;
using namespace sluice::syslog_tcp;
using namespace std::chrono_literals;

namespace {

// A write the test cannot go on without.
void send_whole(int fd, std::string_view bytes) { REQUIRE(test::send_all(fd, bytes)); }

struct Received {
  std::vector<EventBatch> batches;
  SyslogTcpCounters counters;
  std::vector<std::pair<const EventBatch*, const EventRecord*>> events() const {
    std::vector<std::pair<const EventBatch*, const EventRecord*>> all;
    for (const EventBatch& b : batches)
      for (const EventRecord& e : b) all.emplace_back(&b, &e);
    return all;
  }
  std::vector<std::string> bodies() const {
    std::vector<std::string> out;
    for (auto [b, e] : events()) out.emplace_back(b->body(*e));
    return out;
  }
  std::vector<std::string> json() const {
    std::vector<std::string> out;
    for (auto [b, e] : events()) append_event_json(*b, *e, out.emplace_back());
    return out;
  }
};

// Starts a source with `properties`, sends each chunk on its own connection (in order, one
// connection per chunk), stops the source and returns what reached the channel.
Received run_source(const std::map<std::string, std::string>& properties, const std::vector<std::string>& chunks) {
  MemoryChannel channel("c", MemoryChannelConfig{100000, 100000, {}, 20});
  const auto component = test::syslog_source_component(properties);
  SyslogTcpSource source(component, parse_syslog_tcp_config(component), {&channel});
  source.start();
  for (const std::string& chunk : chunks) {
    const int fd = test::connect_loopback(source.listening_ports()[0]);
    send_whole(fd, chunk);
    ::close(fd);
  }
  // The source has read everything once it has counted every byte.
  uint64_t total = 0;
  for (const std::string& chunk : chunks) total += chunk.size();
  REQUIRE(test::eventually([&] { return source.tcp_counters().bytes_received >= total; }, 5s));
  source.stop(Clock::now() + 5s);
  Received r;
  r.counters = source.tcp_counters();
  for (Take t = channel.take(100000, Clock::now()); !t.empty(); t = channel.take(100000, Clock::now()))
    for (EventBatch& b : t.batches) r.batches.push_back(std::move(b));
  return r;
}

const std::string k5424 = "<34>1 2003-10-11T22:14:15.003Z mymachine su - ID47 - failed\n";
const std::string k3164 = "<34>Oct 11 22:14:15 mymachine su: failed\n";

}  // namespace

TEST_CASE("keepFields chooses which header fields stay in the body as Flume's does", "[source][fidelity]") {
  CHECK(run_source({}, {k5424 + k3164}).bodies() == std::vector<std::string>{"su - ID47 - failed", "su: failed"});
  CHECK(run_source({{"keepFields", "all"}}, {k5424 + k3164}).bodies() ==
        std::vector<std::string>{k5424.substr(0, k5424.size() - 1), k3164.substr(0, k3164.size() - 1)});
  CHECK(run_source({{"keepFields", "true"}}, {k3164}).bodies() ==
        std::vector<std::string>{k3164.substr(0, k3164.size() - 1)});
  CHECK(run_source({{"keepFields", "hostname"}}, {k5424 + k3164}).bodies() ==
        std::vector<std::string>{"mymachine su - ID47 - failed", "mymachine su: failed"});
  CHECK(run_source({{"keepFields", "priority timestamp"}}, {k5424 + k3164}).bodies() ==
        std::vector<std::string>{"<34>2003-10-11T22:14:15.003Z su - ID47 - failed", "<34>Oct 11 22:14:15 su: failed"});
  CHECK_THROWS_WITH(parse_syslog_tcp_config(test::syslog_source_component({{"keepFields", "hostname pid"}})),
                    Catch::Contains("a.sources.s.keepFields: \"pid\": expected none, all"));
}

TEST_CASE("the source reads octet-counted and NUL-terminated frames over TCP and counts per port",
          "[source][fidelity]") {
  auto octet = [](const std::string& frame) { return std::to_string(frame.size()) + " " + frame; };
  const std::string octets = octet("<13>1 - h a - - - x") + octet("<13>multi\nline");
  const Received r = run_source({}, {octets, std::string("<13>nul one\0<13>nul two\0", 24), "<13>line\n\n\n"});
  CHECK(r.bodies() == std::vector<std::string>{"a - - - x", "multi\nline", "nul one", "nul two", "line"});
  REQUIRE(r.counters.per_port.size() == 1);
  CHECK(r.counters.per_port[0].octet_counted == 2);
  CHECK(r.counters.per_port[0].events == 5);
  CHECK(r.counters.per_port[0].blank_lines == 2);
  CHECK(r.counters.blank_lines == 2);
}

TEST_CASE("the source counts truncated and invalid frames per port and skips the rest of an oversized one",
          "[source][fidelity]") {
  const std::string big = "<13>" + std::string(5000, 'x') + "\nno pri\n<13>after\n";
  const Received r = run_source({{"eventSize", "100"}}, {big});
  const auto events = r.events();
  REQUIRE(events.size() == 3);
  CHECK(events[0].second->status == EventStatus::incomplete);
  CHECK(events[0].second->length == 100);
  CHECK(events[1].second->status == EventStatus::invalid);
  CHECK(r.bodies()[2] == "after");
  CHECK(r.counters.per_port[0].truncated == 1);
  CHECK(r.counters.per_port[0].invalid == 1);
  CHECK(r.json()[0].find("\"flume.syslog.status\":\"Incomplete\"") != std::string::npos);
  CHECK(r.json()[1].find("\"flume.syslog.status\":\"Invalid\"") != std::string::npos);
}

TEST_CASE("charset.default validates UTF-8 and charset.port converts ISO-8859-1", "[source][fidelity]") {
  SECTION("UTF-8: valid text untouched, invalid bytes replaced and counted") {
    const Received r = run_source({}, {"<13>h a: caf\xC3\xA9\n<13>h a: bad \xE9 byte\n"});
    CHECK(r.bodies() == std::vector<std::string>{"h a: caf\xC3\xA9", "h a: bad \xEF\xBF\xBD byte"});
    CHECK(r.counters.per_port[0].invalid_utf8 == 1);
  }
  SECTION("ISO-8859-1 on one port") {
    MemoryChannel channel("c", MemoryChannelConfig{1000, 1000, {}, 20});
    // The port must be known before start.
    const std::string port = std::to_string(test::free_ports(1)[0]);
    const auto component = test::syslog_source_component({{"ports", port}, {"charset.port." + port, "ISO-8859-1"}});
    SyslogTcpSource source(component, parse_syslog_tcp_config(component), {&channel});
    source.start();
    const int fd = test::connect_loopback(source.listening_ports()[0]);
    send_whole(fd, "<13>h a: caf\xE9 \xFC\n");
    ::close(fd);
    REQUIRE(test::eventually([&] { return source.tcp_counters().events_received >= 1; }, 5s));
    source.stop(Clock::now() + 5s);
    const Take t = channel.take(10, Clock::now());
    REQUIRE(t.events == 1);
    CHECK(t.batches[0].body(t.batches[0][0]) == "h a: caf\xC3\xA9 \xC3\xBC");
    CHECK(source.tcp_counters().events_invalid_utf8 == 0);
  }
  SECTION("bad charsets are refused naming the key") {
    CHECK_THROWS_WITH(parse_syslog_tcp_config(test::syslog_source_component({{"charset.default", "EBCDIC"}})),
                      Catch::Contains("a.sources.s.charset.default: \"EBCDIC\" is not a supported charset"));
    CHECK_THROWS_WITH(
        parse_syslog_tcp_config(test::syslog_source_component({{"ports", "5140"}, {"charset.port.5999", "UTF-8"}})),
        Catch::Contains("charset.port.5999: names a port that is not in ports"));
  }
}

TEST_CASE("portHeader clientIPHeader and clientHostnameHeader put the connection's facts on each event",
          "[source][fidelity]") {
  const Received r =
      run_source({{"portHeader", "port"}, {"clientIPHeader", "client_ip"}, {"clientHostnameHeader", "client_host"}},
                 {"<13>Nov 30 11:07:06 h app[7]: one\n<13>Nov 30 11:07:07 h app[7]: two\n"});
  const auto events = r.events();
  REQUIRE(events.size() == 2);
  for (auto [batch, e] : events) {
    CHECK(batch->client_ip(*e) == "127.0.0.1");
    CHECK_FALSE(batch->client_host(*e).empty());  // "localhost" from /etc/hosts, or the IP without a name
  }
  const std::string json = r.json()[0];
  INFO(json);
  CHECK(json.find("\"client_ip\":\"127.0.0.1\"") != std::string::npos);
  CHECK(json.find("\"client_host\":\"") != std::string::npos);
  CHECK(json.find("\"port\":" + std::to_string(events[0].second->port)) != std::string::npos);
  CHECK(json.find("\"host\":\"h\",\"app\":\"app\",\"procid\":\"7\"") != std::string::npos);
  CHECK(json.find("\"message\":\"one\"") != std::string::npos);
}

TEST_CASE("idleTimeout closes a silent connection and keeps its unterminated last line", "[source][fidelity]") {
  MemoryChannel channel("c", MemoryChannelConfig{1000, 1000, {}, 20});
  const auto component = test::syslog_source_component({{"idleTimeout", "300ms"}});
  SyslogTcpSource source(component, parse_syslog_tcp_config(component), {&channel});
  source.start();
  const int fd = test::connect_loopback(source.listening_ports()[0]);
  send_whole(fd, "<13>h a: complete\n<13>h a: no newline yet");
  pollfd p{fd, POLLIN, 0};
  const auto started = Clock::now();
  REQUIRE(::poll(&p, 1, 5000) == 1);
  char byte;
  CHECK(::recv(fd, &byte, 1, 0) == 0);  // closed by the agent
  CHECK(Clock::now() - started >= 250ms);
  ::close(fd);
  source.stop(Clock::now() + 5s);
  CHECK(source.tcp_counters().connections_idle_closed == 1);
  CHECK(source.tcp_counters().events_received == 2);
}

TEST_CASE("maxConnectionAge asks a connection to reconnect with our FIN and reads it to its sender's close",
          "[source][fidelity]") {
  MemoryChannel channel("c", MemoryChannelConfig{1000, 1000, {}, 20});
  const auto component =
      test::syslog_source_component({{"maxConnectionAge", "300ms"}, {"maxConnectionAgeJitter", "1ms"}});
  SyslogTcpSource source(component, parse_syslog_tcp_config(component), {&channel});
  source.start();
  const int fd = test::connect_loopback(source.listening_ports()[0]);
  const auto started = Clock::now();
  send_whole(fd, "<13>h a: before\n");
  pollfd p{fd, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 5000) == 1);
  char byte;
  CHECK(::recv(fd, &byte, 1, 0) == 0);  // our FIN
  CHECK(Clock::now() - started >= 250ms);
  // Counted once the worker has asked every aged connection (our FIN may arrive first).
  CHECK(test::eventually([&] { return source.tcp_counters().connections_aged == 1; }, 5s));
  // Half-closed, not cut: what its sender writes before it closes is read, its last line whole.
  send_whole(fd, "<13>h a: after the FIN\n<13>h a: unterminated");
  ::close(fd);
  REQUIRE(test::eventually([&] { return source.tcp_counters().connections_closed == 1; }, 5s));
  source.stop(Clock::now() + 5s);
  CHECK(source.tcp_counters().events_received == 3);
  CHECK(source.tcp_counters().frames_cut == 0);
  CHECK(source.tcp_counters().connections_aged == 1);
}

TEST_CASE(
    "a stop during maxConnectionAge's farewell reads what the sender sent and ends the connection at the deadline",
    "[source][fidelity][shutdown]") {
  MemoryChannel channel("c", MemoryChannelConfig{1000, 1000, {}, 20});
  const auto component =
      test::syslog_source_component({{"maxConnectionAge", "300ms"}, {"maxConnectionAgeJitter", "1ms"}});
  SyslogTcpSource source(component, parse_syslog_tcp_config(component), {&channel});
  source.start();
  const int fd = test::connect_loopback(source.listening_ports()[0]);
  send_whole(fd, "<13>h a: before\n");
  pollfd p{fd, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 5000) == 1);
  char byte;
  REQUIRE(::recv(fd, &byte, 1, 0) == 0);  // our FIN: the farewell has begun
  // The sender goes on and never closes (a sender that ignores the FIN); SIGTERM comes meanwhile,
  // and what it sends during the stop's drain is read too.
  send_whole(fd, "<13>h a: after the FIN\n");
  REQUIRE(test::eventually([&] { return source.tcp_counters().events_received == 2; }, 5s));
  source.request_stop(Clock::now() + 2s);
  send_whole(fd, "<13>h a: during the stop\n");
  REQUIRE(test::eventually([&] { return source.tcp_counters().events_received == 3; }, 5s));
  source.stop(Clock::now() + 2s);  // returns (a stop that hung would fail at the test's timeout)
  const auto c = source.tcp_counters();
  CHECK(c.events_received == 3);
  CHECK(c.frames_cut == 0);
  CHECK(c.connections_aged == 1);
  CHECK(c.connections_cut_at_shutdown == 1);  // still open at the deadline: cut, and counted
  CHECK(channel.counters().events_held == 3);
  ::close(fd);
}

TEST_CASE("maxEventsPerSecondPerClient holds a client's connection, and a stop lifts the hold to read to the end",
          "[source][fidelity]") {
  MemoryChannel channel("c", MemoryChannelConfig{10000, 1000, {}, 20});
  const auto component = test::syslog_source_component({{"maxEventsPerSecondPerClient", "100"}});
  SyslogTcpSource source(component, parse_syslog_tcp_config(component), {&channel});
  source.start();
  const int fd = test::connect_loopback(source.listening_ports()[0]);
  std::string lines;
  for (int i = 0; i < 1000; ++i) lines += "<13>h a: line " + std::to_string(i) + "\n";
  // The first read takes all 1,000 (a read is charged whole): ten seconds' worth of debt.
  send_whole(fd, lines);
  REQUIRE(test::eventually([&] { return source.tcp_counters().clients_held == 1; }, 5s));
  REQUIRE(test::eventually([&] { return source.tcp_counters().events_received == 1000; }, 5s));
  CHECK(source.tcp_counters().client_holds == 1);
  // What comes while it is held waits unread; the stop reads it all.
  send_whole(fd, lines);
  ::shutdown(fd, SHUT_WR);
  CHECK(source.tcp_counters().events_received == 1000);
  source.stop(Clock::now() + 5s);
  CHECK(source.tcp_counters().events_received == 2000);
  CHECK(source.tcp_counters().connections_cut_at_shutdown == 0);
  ::close(fd);
}

TEST_CASE("a sender that never ends its line holds no more than eventSize", "[source][fidelity]") {
  // 64 KiB without a newline, one read at a time: one cut event, the rest skipped unbuffered.
  const Received r = run_source({{"eventSize", "256"}}, {"<13>" + std::string(65536, 'y')});
  REQUIRE(r.events().size() == 1);
  CHECK(r.events()[0].second->length == 256);
  CHECK(r.counters.events_truncated == 1);
}
