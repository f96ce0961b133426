// Flume's ipFilterRules: the first rule that matches decides, no match lets in.

#include <arpa/inet.h>
#include <netinet/in.h>

#include <catch2/catch.hpp>

#include "sources/pipeline/flume_ip_rules.h"

using sluice::pipeline::FlumeIpRules;

namespace {

sockaddr_storage peer(const char* text) {
  sockaddr_storage s{};
  if (inet_pton(AF_INET, text, &reinterpret_cast<sockaddr_in&>(s).sin_addr) == 1) {
    s.ss_family = AF_INET;
  } else {
    REQUIRE(inet_pton(AF_INET6, text, &reinterpret_cast<sockaddr_in6&>(s).sin6_addr) == 1);
    s.ss_family = AF_INET6;
  }
  return s;
}

}  // namespace

TEST_CASE("Flume's ipFilterRules: the first match decides, none lets in", "[pipeline][ipfilter]") {
  // The user guide's example.
  const FlumeIpRules guide("allow:ip:127.*,allow:name:localhost,deny:ip:*");
  CHECK(guide.admits(peer("127.0.0.1")));
  CHECK(guide.admits(peer("::1")));  // name:localhost
  CHECK_FALSE(guide.admits(peer("10.1.2.3")));
  const FlumeIpRules some(" deny:ip:10.0.0.? , allow:ip:10.* ");
  CHECK_FALSE(some.admits(peer("10.0.0.7")));
  CHECK(some.admits(peer("10.0.0.77")));  // '?' is one character, the match whole
  CHECK(some.admits(peer("10.9.9.9")));
  CHECK(some.admits(peer("192.0.2.1")));              // no rule matches: in
  CHECK_FALSE(some.admits(peer("::ffff:10.0.0.7")));  // an IPv4 client of a dual-stack port: as itself
  CHECK_FALSE(FlumeIpRules("deny:ip:192.0.2.1").admits(peer("192.0.2.1")));
  CHECK(FlumeIpRules("deny:ip:192.0.2.1").admits(peer("192.0.2.10")));
}

TEST_CASE("what is not Flume's rule syntax, and name rules but localhost, are refused", "[pipeline][ipfilter]") {
  CHECK_THROWS_WITH(FlumeIpRules("permit:ip:*"), Catch::Contains("<allow|deny>"));
  CHECK_THROWS_WITH(FlumeIpRules("allow:host:*"), Catch::Contains("<allow|deny>"));
  CHECK_THROWS_WITH(FlumeIpRules("allow"), Catch::Contains("<allow|deny>"));
  CHECK_THROWS_WITH(FlumeIpRules("allow:name:*.example.com"), Catch::Contains("reverse lookup"));
  CHECK_THROWS_WITH(FlumeIpRules(" , "), Catch::Contains("no rule"));
  CHECK_THROWS(FlumeIpRules("allow:ip:10.[0-"));
}
