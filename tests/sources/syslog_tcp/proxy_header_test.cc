// The PROXY protocol header (v1 text, v2 binary) as HAProxy sends it, and the connections the
// source then refuses or reads with the client's own address.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <string>

#include "channels/memory/memory_channel.h"
#include "sources/syslog_tcp/proxy_header.h"
#include "sources/syslog_tcp/syslog_tcp_source.h"
#include "tests/support/channel_contents.h"
#include "tests/support/component.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"

using namespace sluice;
using namespace sluice::syslog_tcp;
using namespace std::chrono_literals;
using State = ProxyHeader::State;

namespace {

std::string address_of(const ProxyHeader& h) {
  REQUIRE(h.client);
  return address_text(*h.client);
}

uint16_t port_of(const ProxyHeader& h) {
  REQUIRE(h.client);
  const auto& s = *h.client;
  return ntohs(s.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(s).sin_port
                                      : reinterpret_cast<const sockaddr_in6&>(s).sin6_port);
}

// A v2 header: PROXY (or LOCAL) over TCP/IPv4 from 192.0.2.7:51234 to 198.51.100.1:514, with
// `tlv` bytes after the addresses.
std::string v2(bool local = false, const std::string& tlv = "") {
  std::string h("\r\n\r\n\0\r\nQUIT\n", 12);
  h += static_cast<char>(local ? 0x20 : 0x21);
  h += static_cast<char>(0x11);
  const size_t length = 12 + tlv.size();
  h += static_cast<char>(length >> 8);
  h += static_cast<char>(length & 0xff);
  h += std::string("\xc0\x00\x02\x07", 4) + std::string("\xc6\x33\x64\x01", 4);
  h += std::string("\xc8\x22", 2) + std::string("\x02\x02", 2);
  return h + tlv;
}

}  // namespace

TEST_CASE("PROXY v1: TCP4, TCP6 and UNKNOWN lines, taken whole and only whole", "[source][proxy]") {
  const std::string line = "PROXY TCP4 192.0.2.7 198.51.100.1 51234 514\r\n";
  const ProxyHeader h = parse_proxy_header(line + "<13>rest", ProxyProtocol::v1);
  REQUIRE(h.state == State::done);
  CHECK(h.length == line.size());
  CHECK(address_of(h) == "192.0.2.7");
  CHECK(port_of(h) == 51234);
  for (size_t n = 0; n < line.size(); ++n) {  // every split of the line waits for more
    INFO(n);
    CHECK(parse_proxy_header(line.substr(0, n), ProxyProtocol::v1).state == State::incomplete);
  }
  const ProxyHeader six = parse_proxy_header("PROXY TCP6 2001:db8::7 2001:db8::1 4000 6514\r\n", ProxyProtocol::any);
  REQUIRE(six.state == State::done);
  CHECK(address_of(six) == "2001:db8::7");
  const ProxyHeader unknown = parse_proxy_header("PROXY UNKNOWN\r\n<13>x", ProxyProtocol::v1);
  CHECK(unknown.state == State::done);
  CHECK(unknown.length == 15);
  CHECK_FALSE(unknown.client);
}

TEST_CASE("PROXY v2: PROXY and LOCAL commands, TLVs skipped, every split waits", "[source][proxy]") {
  const std::string header = v2(false, std::string("\x04\x00\x03"
                                                   "abc",
                                                   6));  // a NOOP TLV
  const ProxyHeader h = parse_proxy_header(header + "<13>rest", ProxyProtocol::v2);
  REQUIRE(h.state == State::done);
  CHECK(h.length == header.size());
  CHECK(address_of(h) == "192.0.2.7");
  CHECK(port_of(h) == 51234);
  for (size_t n = 0; n < header.size(); ++n) {
    INFO(n);
    CHECK(parse_proxy_header(header.substr(0, n), ProxyProtocol::any).state == State::incomplete);
  }
  const ProxyHeader local = parse_proxy_header(v2(true), ProxyProtocol::any);
  CHECK(local.state == State::done);
  CHECK_FALSE(local.client);
}

TEST_CASE("PROXY: no header, the other version, malformed or oversized headers are refused", "[source][proxy]") {
  const auto error_of = [](const std::string& bytes, ProxyProtocol p) {
    const ProxyHeader h = parse_proxy_header(bytes, p);
    CHECK(h.state == State::refused);
    return h.error;
  };
  CHECK(error_of("<13>Nov 30 11:07:06 h app: no header\n", ProxyProtocol::any) == "no PROXY protocol header");
  CHECK_THAT(error_of(v2(), ProxyProtocol::v1), Catch::Contains("v2 header where v1"));
  CHECK_THAT(error_of("PROXY TCP4 192.0.2.7 198.51.100.1 51234 514\r\n", ProxyProtocol::v2),
             Catch::Contains("v1 header where v2"));
  CHECK_THAT(error_of("PROXY TCP4 192.0.2.300 198.51.100.1 51234 514\r\n", ProxyProtocol::v1),
             Catch::Contains("malformed"));
  CHECK_THAT(error_of("PROXY TCP4 192.0.2.7 198.51.100.1 65536 514\r\n", ProxyProtocol::v1),
             Catch::Contains("malformed"));
  CHECK_THAT(error_of("PROXY UDP4 192.0.2.7 198.51.100.1 1 2\r\n", ProxyProtocol::v1), Catch::Contains("UDP4"));
  CHECK_THAT(error_of("PROXY " + std::string(120, 'x'), ProxyProtocol::v1), Catch::Contains("longer than 107"));
  std::string huge = v2();
  huge[14] = '\x20';  // a length of 8 KiB
  CHECK_THAT(error_of(huge, ProxyProtocol::v2), Catch::Contains("at most 4096"));
  std::string version3 = v2();
  version3[12] = '\x31';
  CHECK_THAT(error_of(version3, ProxyProtocol::v2), Catch::Contains("version 3"));
}

namespace {

// A source with proxyProtocol on its one port, into a channel this test reads.
struct ProxiedSource {
  MemoryChannel channel{"c", MemoryChannelConfig{1000, 1000, {}, 20}};
  std::unique_ptr<SyslogTcpSource> source;
  explicit ProxiedSource(std::map<std::string, std::string> properties) {
    properties.emplace("clientIPHeader", "clientIP");
    properties.emplace("proxyTrustedFrom", "127.0.0.0/8");
    const auto component = test::syslog_source_component(properties);
    source = std::make_unique<SyslogTcpSource>(component, parse_syslog_tcp_config(component),
                                               std::vector<Channel*>{&channel});
    source->start();
  }
  int connect_and_send(const std::string& bytes) {
    const int fd = test::connect_loopback(source->listening_ports()[0]);
    REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    return fd;
  }
  // "<client IP> <body>" of the events in the channel, in order.
  std::vector<std::string> client_ips() {
    return test::take_all(channel, [](const EventBatch& b, const EventRecord& e) {
      return std::string(b.client_ip(e)) + " " + std::string(b.body(e));
    });
  }
};

}  // namespace

TEST_CASE("behind a PROXY balancer events carry the client's address, split headers included", "[source][proxy]") {
  ProxiedSource p(std::map<std::string, std::string>{{"proxyProtocol", "auto"}});
  const int a = p.connect_and_send("PROXY TCP4 192.0.2.7 198.51.100.1 51234 514\r\n<13>Nov 30 11:07:06 h app: one\n");
  const std::string header = v2();
  const int b = p.connect_and_send(header.substr(0, 5));  // the rest later: the source must wait
  REQUIRE(test::eventually([&] { return p.source->counters().events_received == 1; }, 5s));
  const std::string rest = header.substr(5) + "<13>Nov 30 11:07:06 h app: two\n";
  REQUIRE(::write(b, rest.data(), rest.size()) == static_cast<ssize_t>(rest.size()));
  const int local = p.connect_and_send(v2(true) + "<13>Nov 30 11:07:06 h app: health\n");
  ::close(a);
  ::close(b);
  ::close(local);
  REQUIRE(test::eventually([&] { return p.source->counters().events_received == 3; }, 5s));
  p.source->stop(Clock::now() + 5s);
  std::vector<std::string> events = p.client_ips();
  std::sort(events.begin(), events.end());
  CHECK(events == std::vector<std::string>{"127.0.0.1 app: health", "192.0.2.7 app: one", "192.0.2.7 app: two"});
  CHECK(p.source->tcp_counters().connections_refused_proxy == 0);
}

TEST_CASE("a connection without the PROXY header it must start with is refused and counted, none of it read",
          "[source][proxy]") {
  ProxiedSource p(std::map<std::string, std::string>{{"proxyProtocol", "v2"}, {"proxyHeaderTimeout", "300ms"}});
  const int plain = p.connect_and_send("<13>Nov 30 11:07:06 h app: sent straight to the agent\n");
  const int v1 = p.connect_and_send("PROXY TCP4 192.0.2.7 198.51.100.1 51234 514\r\n<13>app: v1 where v2 is set\n");
  const int silent = p.connect_and_send("");  // sends nothing: refused at proxyHeaderTimeout
  CHECK(test::closed_by_peer(plain, 5s));
  CHECK(test::closed_by_peer(v1, 5s));
  CHECK(test::closed_by_peer(silent, 5s));
  for (int fd : {plain, v1, silent}) ::close(fd);
  CHECK(test::eventually([&] { return p.source->tcp_counters().connections_refused_proxy == 3; }, 5s));
  p.source->stop(Clock::now() + 5s);
  CHECK(p.source->counters().events_received == 0);
  CHECK(p.client_ips().empty());
}

TEST_CASE("with clientHostnameHeader what follows the PROXY header waits for the client's name, then is read",
          "[source][proxy]") {
  // 127.0.0.1 is named by /etc/hosts: no DNS needed. The line comes in the header's own write.
  ProxiedSource p(std::map<std::string, std::string>{{"proxyProtocol", "v2"}, {"clientHostnameHeader", "clientHost"}});
  std::string header = v2();
  header.replace(16, 4, std::string("\x7f\x00\x00\x01", 4));  // the client: 127.0.0.1
  const int fd = p.connect_and_send(header + "<13>Dec  2 10:00:00 h app: after the lookup\n");
  ::close(fd);
  REQUIRE(test::eventually([&] { return p.source->counters().events_received == 1; }, 10s));
  p.source->stop(Clock::now() + 5s);
  const std::vector<std::string> names = test::take_all(p.channel, [](const EventBatch& b, const EventRecord& e) {
    return std::string(b.client_host(e)) + " " + std::string(b.body(e));
  });
  CHECK(names == std::vector<std::string>{"localhost app: after the lookup"});
}

TEST_CASE("allow and deny judge the client a PROXY header names, not the balancer", "[source][proxy][clients]") {
  ProxiedSource p(std::map<std::string, std::string>{{"proxyProtocol", "v1"}, {"deny", "192.0.2.0/24"}});
  const int denied = p.connect_and_send("PROXY TCP4 192.0.2.7 127.0.0.1 51234 514\r\n<13>app: denied\n");
  const int allowed = p.connect_and_send("PROXY TCP4 203.0.113.9 127.0.0.1 40000 514\r\n<13>app: allowed\n");
  CHECK(test::closed_by_peer(denied, 5s));
  ::close(denied);
  ::close(allowed);
  REQUIRE(test::eventually([&] { return p.source->counters().events_received == 1; }, 5s));
  p.source->stop(Clock::now() + 5s);
  CHECK(p.source->tcp_counters().connections_refused_denied == 1);
  CHECK(p.client_ips() == std::vector<std::string>{"203.0.113.9 app: allowed"});
}

namespace {

// A connection to 127.0.0.1:port from a local address of our choice (all of 127/8 is ours).
int connect_from(const char* local, uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, local, &from.sin_addr);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) == 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0);
  return fd;
}

}  // namespace

TEST_CASE("a PROXY header from a peer outside proxyTrustedFrom is refused at accept: no client can be forged",
          "[source][proxy]") {
  ProxiedSource p(std::map<std::string, std::string>{{"proxyProtocol", "v1"}, {"proxyTrustedFrom", "127.0.0.9"}});
  const uint16_t port = p.source->listening_ports()[0];
  const std::string forged = "PROXY TCP4 10.1.2.3 127.0.0.1 51234 514\r\n<13>app: forged\n";
  const int direct = connect_from("127.0.0.1", port);
  REQUIRE(::write(direct, forged.data(), forged.size()) == static_cast<ssize_t>(forged.size()));
  CHECK(test::closed_by_peer(direct, 5s));
  ::close(direct);
  const std::string real = "PROXY TCP4 203.0.113.9 127.0.0.1 40000 514\r\n<13>app: through the balancer\n";
  const int balancer = connect_from("127.0.0.9", port);
  REQUIRE(::write(balancer, real.data(), real.size()) == static_cast<ssize_t>(real.size()));
  ::close(balancer);
  REQUIRE(test::eventually([&] { return p.source->counters().events_received == 1; }, 5s));
  p.source->stop(Clock::now() + 5s);
  CHECK(p.source->tcp_counters().connections_refused_untrusted == 1);
  CHECK(p.source->tcp_counters().connections_refused_proxy == 0);
  CHECK(p.client_ips() == std::vector<std::string>{"203.0.113.9 app: through the balancer"});
}
