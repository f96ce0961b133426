// clientHostnameHeader against a resolver that never answers (a private loopback whose DNS
// queries are dropped: tests/support/private_network.h, needs root): a new connection waits for
// its name at most hostnameLookupTimeout, and no more than 64 lookups wait per io thread.
// Tagged [resolver] alone: it changes its process's network namespace, so it runs in a process of its
// own (CTest's), not inside the all-in-one TSan run.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <set>

#include "channels/memory/memory_channel.h"
#include "sources/syslog_tcp/syslog_tcp_source.h"
#include "tests/support/channel_contents.h"
#include "tests/support/component.h"
#include "tests/support/eventually.h"
#include "tests/support/private_network.h"
#include "tests/support/process.h"

using namespace sluice;
using namespace sluice::syslog_tcp;
using namespace std::chrono_literals;

namespace {

// Connects from 127.0.0.<host> (all of 127/8 is this loopback's), sends `line`, closes.
void send_from(int host, uint16_t port, const std::string& line) {
  const int fd = test::connect_from("127.0.0." + std::to_string(host), port);
  REQUIRE(::send(fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size()));
  ::close(fd);
}

}  // namespace

TEST_CASE("with a resolver that never answers, connections are read with their address as name, none held for long",
          "[resolver]") {
  ::setenv("RES_OPTIONS", "timeout:30 attempts:1", 1);  // the resolver itself gives up only after 30 s
  test::PrivateNetwork network;
  network.black_hole_dns();
  MemoryChannel channel("c", MemoryChannelConfig{1000, 1000, {}, 20});
  const auto component = test::syslog_source_component(
      {{"clientHostnameHeader", "host"}, {"hostnameLookupTimeout", "3s"}, {"numProcessors", "1"}, {"batchSize", "1"}});
  SyslogTcpSource source(component, parse_syslog_tcp_config(component), {&channel});
  source.start();
  // 70 clients of 70 addresses, none in /etc/hosts: 64 lookups wait (and time out), 6 are not
  // started at all.
  for (int host = 10; host < 80; ++host)
    send_from(host, source.listening_ports()[0], "<13>app: from 127.0.0." + std::to_string(host) + "\n");
  REQUIRE(test::eventually([&] { return source.counters().events_received == 70; }, 20s));
  const SyslogTcpCounters c = source.tcp_counters();
  CHECK(c.lookups_skipped == 6);
  CHECK(c.lookups_timed_out == 64);
  source.stop(Clock::now() + 5s);
  std::set<std::string> names_as_bodies;
  for (const std::string& line : test::take_all(channel, [](const EventBatch&b, const EventRecord&e) {
         return std::string(b.client_host(e)) + " " + std::string(b.body(e));
       }))
    names_as_bodies.insert(line);
  CHECK(names_as_bodies.size() == 70);
  CHECK(names_as_bodies.count("127.0.0.10 app: from 127.0.0.10") == 1);
  CHECK(names_as_bodies.count("127.0.0.79 app: from 127.0.0.79") == 1);
}

TEST_CASE("a stop does not wait for lookups the resolver never answers: their connections are read with their address",
          "[resolver]") {
  ::setenv("RES_OPTIONS", "timeout:30 attempts:1", 1);
  test::PrivateNetwork network;
  network.black_hole_dns();
  MemoryChannel channel("c", MemoryChannelConfig{1000, 1000, {}, 20});
  const auto component = test::syslog_source_component(
      {{"clientHostnameHeader", "host"}, {"hostnameLookupTimeout", "20s"}, {"numProcessors", "1"}});
  SyslogTcpSource source(component, parse_syslog_tcp_config(component), {&channel});
  source.start();
  for (int host = 10; host < 13; ++host)
    send_from(host, source.listening_ports()[0], "<13>app: from 127.0.0." + std::to_string(host) + "\n");
  REQUIRE(test::eventually([&] { return source.tcp_counters().connections_accepted == 3; }, 10s));
  source.stop(Clock::now() + 30s);
  // Given up because of the stop, not because the 20 s timeout ran out (a stop that waited for
  // the resolver would have counted them timed out, or waited its 30 s).
  const SyslogTcpCounters c = source.tcp_counters();
  CHECK(c.lookups_stopped == 3);
  CHECK(c.lookups_timed_out == 0);
  CHECK(source.counters().events_received == 3);
  CHECK(test::take_all(channel, [](const EventBatch& b, const EventRecord& e) {
          return std::string(b.client_host(e));
        }).size() == 3);
}
