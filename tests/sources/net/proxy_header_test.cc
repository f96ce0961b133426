// The PROXY protocol header (v1 text, v2 binary) as HAProxy sends it, parsed whole and only whole,
// every split waiting; what the source does with it is tests/sources/syslog_tcp/proxy_protocol_test.cc.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <string>

#include "sources/net/proxy_header.h"
#include "sources/pipeline/client_filter.h"
#include "tests/support/proxy_headers.h"

using namespace sluice;
using namespace sluice::net;
using sluice::pipeline::address_text;
using namespace std::chrono_literals;
using sluice::test::proxy_v2_header;
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
  const std::string header = proxy_v2_header(false, std::string("\x04\x00\x03"
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
  const ProxyHeader local = parse_proxy_header(proxy_v2_header(true), ProxyProtocol::any);
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
  CHECK_THAT(error_of(proxy_v2_header(), ProxyProtocol::v1), Catch::Contains("v2 header where v1"));
  CHECK_THAT(error_of("PROXY TCP4 192.0.2.7 198.51.100.1 51234 514\r\n", ProxyProtocol::v2),
             Catch::Contains("v1 header where v2"));
  CHECK_THAT(error_of("PROXY TCP4 192.0.2.300 198.51.100.1 51234 514\r\n", ProxyProtocol::v1),
             Catch::Contains("malformed"));
  CHECK_THAT(error_of("PROXY TCP4 192.0.2.7 198.51.100.1 65536 514\r\n", ProxyProtocol::v1),
             Catch::Contains("malformed"));
  CHECK_THAT(error_of("PROXY UDP4 192.0.2.7 198.51.100.1 1 2\r\n", ProxyProtocol::v1), Catch::Contains("UDP4"));
  CHECK_THAT(error_of("PROXY " + std::string(120, 'x'), ProxyProtocol::v1), Catch::Contains("longer than 107"));
  std::string huge = proxy_v2_header();
  huge[14] = '\x20';  // a length of 8 KiB
  CHECK_THAT(error_of(huge, ProxyProtocol::v2), Catch::Contains("at most 4096"));
  std::string version3 = proxy_v2_header();
  version3[12] = '\x31';
  CHECK_THAT(error_of(version3, ProxyProtocol::v2), Catch::Contains("version 3"));
}
