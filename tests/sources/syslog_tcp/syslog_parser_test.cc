#include <catch2/catch.hpp>

#include "sources/syslog_tcp/syslog_parser.h"

using namespace sluice;
using namespace sluice::syslog_tcp;

namespace {

struct Parsed {
  int facility, severity;
  EventStatus status;
  std::string body, host, app;
};

Parsed parse(const std::string& line) {
  EventRecord e;
  parse_syslog_header(line, e);
  return {e.facility, e.severity, e.status, line.substr(e.body_offset), line.substr(e.host_offset, e.host_length),
          line.substr(e.app_offset, e.app_length)};
}

}  // namespace

TEST_CASE("parser reads PRI into facility and severity", "[parser]") {
  const Parsed p = parse("<134>Nov 30 11:07:06 host app: msg");
  CHECK(p.facility == 16);
  CHECK(p.severity == 6);
  CHECK(p.status == EventStatus::ok);
  CHECK(parse("<0>x").facility == 0);
  CHECK(parse("<191>x").facility == 23);
}

TEST_CASE("parser marks a line without a valid PRI invalid and keeps it whole", "[parser]") {
  for (const std::string line : {"no pri here", "<192>too big", "<01>leading zero", "<>empty", "<1234>long", "<13"}) {
    INFO(line);
    const Parsed p = parse(line);
    CHECK(p.status == EventStatus::invalid);
    CHECK(p.body == line);
    CHECK(p.facility == 1);
    CHECK(p.severity == 5);
  }
}

TEST_CASE("parser finds the body after an RFC 3164 timestamp and hostname", "[parser]") {
  CHECK(parse("<134>Nov 30 11:07:06 host app[12]: the message").body == "app[12]: the message");
  CHECK(parse("<134>Nov  3 01:02:03 host app: m").body == "app: m");
  CHECK(parse("<134>Nov 30 11:07:06 sshd[12]: no host").body == "sshd[12]: no host");
  CHECK(parse("<13>just text").body == "just text");
}

TEST_CASE("parser finds the body after the RFC 5424 header and structured data", "[parser]") {
  CHECK(parse("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 "
              "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\"] An application event")
            .body == "An application event");
  CHECK(parse("<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed").body ==
        "'su root' failed");
  CHECK(parse("<34>1 - - - - - [a@1 x=\"q\\]uote\\\"\"][b@2] msg").body == "msg");
  CHECK(parse("<34>1 - - - - -").body == "");
}

TEST_CASE("parser records the hostname and app name of 3164 and 5424 lines", "[parser]") {
  const Parsed bsd = parse("<134>Nov 30 11:07:06 web-01.example.com nginx[812]: GET /");
  CHECK(bsd.host == "web-01.example.com");
  CHECK(bsd.app == "nginx");
  const Parsed no_host = parse("<134>Nov 30 11:07:06 kernel: oops");
  CHECK(no_host.host == "");
  CHECK(no_host.app == "kernel");
  const Parsed rfc = parse("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 - hi");
  CHECK(rfc.host == "mymachine.example.com");
  CHECK(rfc.app == "evntslog");
  const Parsed nil = parse("<165>1 - - - - - - hi");
  CHECK(nil.host == "");
  CHECK(nil.app == "");
  CHECK(parse("no pri").host == "");
}
