#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <thread>

#include "channels/memory/memory_channel.h"
#include "sources/pipeline/client_filter.h"
#include "sources/syslog_tcp/syslog_tcp_source.h"
#include "tests/support/component.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"

using namespace sluice;
using namespace sluice::syslog_tcp;
using namespace sluice::pipeline;
using namespace std::chrono_literals;

namespace {

sockaddr_storage address(const char* text) {
  sockaddr_storage s{};
  if (inet_pton(AF_INET, text, &reinterpret_cast<sockaddr_in&>(s).sin_addr) == 1) {
    s.ss_family = AF_INET;
  } else {
    inet_pton(AF_INET6, text, &reinterpret_cast<sockaddr_in6&>(s).sin6_addr);
    s.ss_family = AF_INET6;
  }
  return s;
}

}  // namespace

TEST_CASE("networks parse as CIDR and match IPv4 IPv6 and v4-mapped peers", "[source][clients]") {
  CHECK(parse_network("10.0.0.0/8")->contains(address("10.200.1.2")));
  CHECK_FALSE(parse_network("10.0.0.0/8")->contains(address("11.0.0.1")));
  CHECK(parse_network("192.0.2.7")->contains(address("192.0.2.7")));
  CHECK_FALSE(parse_network("192.0.2.7")->contains(address("192.0.2.8")));
  CHECK(parse_network("10.1.2.0/23")->contains(address("10.1.3.255")));
  CHECK(parse_network("fd00::/8")->contains(address("fd12::1")));
  CHECK_FALSE(parse_network("fd00::/8")->contains(address("10.0.0.1")));
  CHECK(parse_network("127.0.0.0/8")->contains(address("::ffff:127.0.0.1")));
  for (const char* bad : {"10.0.0.0/33", "10.0.0/8", "host.example", "::1/129", "10.0.0.0/x", ""}) {
    INFO(bad);
    CHECK_FALSE(parse_network(bad));
  }
  const ClientFilter filter({*parse_network("10.0.0.0/8")}, {*parse_network("10.9.0.0/16")});
  CHECK(filter.admits(address("10.1.1.1")));
  CHECK_FALSE(filter.admits(address("10.9.1.1")));
  CHECK_FALSE(filter.admits(address("192.0.2.1")));
  CHECK(ClientFilter().admits(address("192.0.2.1")));
}

TEST_CASE("a bad network in allow or deny is refused naming the key", "[source][clients]") {
  CHECK_THROWS_WITH(parse_syslog_tcp_config(test::syslog_source_component({{"allow", "10.0.0.0/8 10.0.0.0/40"}})),
                    Catch::Contains("a.sources.s.allow: \"10.0.0.0/40\" is not a network"));
}

TEST_CASE("the source refuses clients outside allow and connections over maxConnections", "[source][clients]") {
  MemoryChannel channel("c", MemoryChannelConfig{1000, 1000, {}, 20});
  SECTION("allow") {
    SyslogTcpSource source(test::syslog_source_component({{"allow", "10.0.0.0/8"}}),
                           parse_syslog_tcp_config(test::syslog_source_component({{"allow", "10.0.0.0/8"}})),
                           {&channel});
    source.start();
    const int fd = test::connect_loopback(source.listening_ports()[0]);
    CHECK(test::closed_by_peer(fd, 5s));
    ::close(fd);
    source.stop(Clock::now() + 5s);
    CHECK(source.tcp_counters().connections_refused_denied == 1);
  }
  SECTION("maxConnections") {
    const auto component = test::syslog_source_component({{"maxConnections", "2"}});
    SyslogTcpSource source(component, parse_syslog_tcp_config(component), {&channel});
    source.start();
    const int a = test::connect_loopback(source.listening_ports()[0]),
              b = test::connect_loopback(source.listening_ports()[0]);
    REQUIRE(test::eventually([&] { return source.tcp_counters().connections_accepted == 2; }, 5s));  // before the third
    const int c = test::connect_loopback(source.listening_ports()[0]);
    CHECK(test::closed_by_peer(c, 5s));
    CHECK_FALSE(test::closed_by_peer(a, 100ms));
    ::close(a);
    ::close(b);
    ::close(c);
    source.stop(Clock::now() + 5s);
    CHECK(source.tcp_counters().connections_refused_limit == 1);
  }
}
