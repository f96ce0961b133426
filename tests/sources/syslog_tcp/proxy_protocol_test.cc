// The syslog TCP source behind a PROXY-protocol balancer: events carry the client the header
// names, a connection without the header (or from a peer outside proxyTrustedFrom) is refused.
// The header's parser is tests/sources/net/proxy_header_test.cc.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <string>

#include "channels/memory/memory_channel.h"
#include "sources/net/proxy_header.h"
#include "sources/syslog_tcp/syslog_tcp_source.h"
#include "tests/support/channel_contents.h"
#include "tests/support/component.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/proxy_headers.h"

using namespace sluice;
using namespace sluice::syslog_tcp;
using namespace std::chrono_literals;
using sluice::test::proxy_v2_header;

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
  const std::string header = proxy_v2_header();
  const int b = p.connect_and_send(header.substr(0, 5));  // the rest later: the source must wait
  REQUIRE(test::eventually([&] { return p.source->counters().events_received == 1; }, 5s));
  const std::string rest = header.substr(5) + "<13>Nov 30 11:07:06 h app: two\n";
  REQUIRE(::write(b, rest.data(), rest.size()) == static_cast<ssize_t>(rest.size()));
  const int local = p.connect_and_send(proxy_v2_header(true) + "<13>Nov 30 11:07:06 h app: health\n");
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
  std::string header = proxy_v2_header();
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

TEST_CASE("a PROXY header from a peer outside proxyTrustedFrom is refused at accept: no client can be forged",
          "[source][proxy]") {
  ProxiedSource p(std::map<std::string, std::string>{{"proxyProtocol", "v1"}, {"proxyTrustedFrom", "127.0.0.9"}});
  const uint16_t port = p.source->listening_ports()[0];
  const std::string forged = "PROXY TCP4 10.1.2.3 127.0.0.1 51234 514\r\n<13>app: forged\n";
  const int direct = test::connect_from("127.0.0.1", port);
  REQUIRE(::write(direct, forged.data(), forged.size()) == static_cast<ssize_t>(forged.size()));
  CHECK(test::closed_by_peer(direct, 5s));
  ::close(direct);
  const std::string real = "PROXY TCP4 203.0.113.9 127.0.0.1 40000 514\r\n<13>app: through the balancer\n";
  const int balancer = test::connect_from("127.0.0.9", port);
  REQUIRE(::write(balancer, real.data(), real.size()) == static_cast<ssize_t>(real.size()));
  ::close(balancer);
  REQUIRE(test::eventually([&] { return p.source->counters().events_received == 1; }, 5s));
  p.source->stop(Clock::now() + 5s);
  CHECK(p.source->tcp_counters().connections_refused_untrusted == 1);
  CHECK(p.source->tcp_counters().connections_refused_proxy == 0);
  CHECK(p.client_ips() == std::vector<std::string>{"203.0.113.9 app: through the balancer"});
}
