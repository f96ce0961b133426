// The syslog parser against the RFCs' own examples and real-world lines, table-driven.

#include <catch2/catch.hpp>

#include <ctime>
#include <string>
#include <vector>

#include "sources/syslog/syslog_parser.h"

using namespace sluice;
using namespace sluice::syslog;

namespace {

// The parsing instant of every table row: 2026-11-30T12:00:00Z, agent zone UTC.
constexpr int64_t kNowMs = 1'796'040'000'000;

// Milliseconds since the epoch of "YYYY-MM-DDThh:mm:ss[.mmm]" UTC, through libc (not the
// parser's own calendar arithmetic).
int64_t utc_ms(const std::string& text) {
  std::tm t{};
  REQUIRE(strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &t) != nullptr);
  int64_t ms = static_cast<int64_t>(timegm(&t)) * 1000;
  if (const auto dot = text.find('.'); dot != std::string::npos)
    ms += std::stoi((text.substr(dot + 1) + "00").substr(0, 3));
  return ms;
}

struct ExpectedParse {
  std::string line;
  int facility, severity;
  std::string timestamp;  // UTC "YYYY-MM-DDThh:mm:ss.mmm"; empty: none in the header (arrival time)
  std::string host, app, procid, msgid, structured_data, message, body;
  EventStatus status = EventStatus::ok;
};

struct Parsed {
  EventRecord e;
  std::string line;
  std::string text(Span s) const { return line.substr(s.offset, s.length); }
};

Parsed parse_line(const std::string& line, const ParseClock& clock = ParseClock::at(kNowMs)) {
  Parsed p{{}, line};
  p.e.length = static_cast<uint32_t>(line.size());
  parse_syslog(line, clock, p.e);
  return p;
}

void check_parsed(const ExpectedParse& x) {
  INFO(x.line);
  const Parsed p = parse_line(x.line);
  CHECK(int{p.e.facility} == x.facility);
  CHECK(int{p.e.severity} == x.severity);
  CHECK(p.e.status == x.status);
  CHECK(p.e.timestamp_from_header == !x.timestamp.empty());
  CHECK(p.e.timestamp_ms == (x.timestamp.empty() ? kNowMs : utc_ms(x.timestamp)));
  CHECK(p.text(p.e.host) == x.host);
  CHECK(p.text(p.e.app) == x.app);
  CHECK(p.text(p.e.procid) == x.procid);
  CHECK(p.text(p.e.msgid) == x.msgid);
  CHECK(p.text(p.e.structured_data) == x.structured_data);
  CHECK(x.line.substr(p.e.message_offset) == x.message);
  CHECK(x.line.substr(p.e.body_offset, p.e.body_length) == x.body);
}

}  // namespace

// The expected fields of each line, laid out as a table rather than by clang-format.
// clang-format off
TEST_CASE("parser reads the RFC 5424 examples", "[parser]") {
  const std::string sd1 = R"([exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"])";
  const std::string sd2 = sd1 + R"([examplePriority@32473 class="high"])";
  for (const ExpectedParse& x : std::vector<ExpectedParse>{
           {"<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8",
            4, 2, "2003-10-11T22:14:15.003", "mymachine.example.com", "su", "", "ID47", "",
            "'su root' failed for lonvick on /dev/pts/8", "su - ID47 - \xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8"},
           {"<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.",
            20, 5, "2003-08-24T12:14:15.000", "192.0.2.1", "myproc", "8710", "", "", "%% It's time to make the do-nuts.",
            "myproc 8710 - - %% It's time to make the do-nuts."},
           {"<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 " + sd1 + " \xEF\xBB\xBF" "An application event log entry...",
            20, 5, "2003-10-11T22:14:15.003", "mymachine.example.com", "evntslog", "", "ID47", sd1,
            "An application event log entry...", "evntslog - ID47 " + sd1 + " \xEF\xBB\xBF" "An application event log entry..."},
           {"<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 " + sd2,
            20, 5, "2003-10-11T22:14:15.003", "mymachine.example.com", "evntslog", "", "ID47", sd2, "",
            "evntslog - ID47 " + sd2},
       })
    check_parsed(x);
}

TEST_CASE("parser reads the RFC 3164 examples", "[parser]") {
  for (const ExpectedParse& x : std::vector<ExpectedParse>{
           {"<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8", 4, 2, "2026-10-11T22:14:15",
            "mymachine", "su", "", "", "", "'su root' failed for lonvick on /dev/pts/8",
            "su: 'su root' failed for lonvick on /dev/pts/8"},
           {"Use the BFG!", 1, 5, "", "", "", "", "", "", "Use the BFG!", "Use the BFG!", EventStatus::invalid},
           {"<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!", 1, 5, "2026-02-05T17:32:18", "10.0.0.99", "", "", "", "",
            "Use the BFG!", "Use the BFG!"},
           // The RFC's own misformatted examples: parsed as far as they go, nothing lost.
           {"<165>Aug 24 05:34:00 CST 1987 mymachine myproc[10]: %% It's time", 20, 5, "2026-08-24T05:34:00", "CST", "",
            "", "", "", "1987 mymachine myproc[10]: %% It's time", "1987 mymachine myproc[10]: %% It's time"},
           {"<0>1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's All Folks!", 0, 0, "", "", "",
            "", "", "", "1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's All Folks!",
            "1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's All Folks!"},
       })
    check_parsed(x);
}

TEST_CASE("parser reads real-world lines from Linux daemons network gear and appliances", "[parser]") {
  for (const ExpectedParse& x : std::vector<ExpectedParse>{
           // rsyslog RSYSLOG_TraditionalForwardFormat
           {"<86>Nov 30 11:07:06 web-01 sshd[2514]: Accepted publickey for deploy from 10.1.2.3 port 52144 ssh2", 10, 6,
            "2026-11-30T11:07:06", "web-01", "sshd", "2514", "", "", "Accepted publickey for deploy from 10.1.2.3 port 52144 ssh2",
            "sshd[2514]: Accepted publickey for deploy from 10.1.2.3 port 52144 ssh2"},
           // rsyslog RSYSLOG_ForwardFormat: RFC 3339 time in a 3164 line
           {"<30>2026-11-30T11:07:06.123456+01:00 web-01 systemd[1]: Started Session 42 of user deploy.", 3, 6,
            "2026-11-30T10:07:06.123", "web-01", "systemd", "1", "", "", "Started Session 42 of user deploy.",
            "systemd[1]: Started Session 42 of user deploy."},
           // rsyslog RSYSLOG_SyslogProtocol23Format
           {"<30>1 2026-11-30T11:07:06.123456+01:00 web-01 systemd 1 - - Started Session 42.", 3, 6,
            "2026-11-30T10:07:06.123", "web-01", "systemd", "1", "", "", "Started Session 42.", "systemd 1 - - Started Session 42."},
           // syslog-ng default
           {"<38>Nov 30 11:07:06 db-02 sudo: deploy : TTY=pts/0 ; PWD=/home/deploy ; USER=root ; COMMAND=/bin/ls", 4, 6,
            "2026-11-30T11:07:06", "db-02", "sudo", "", "", "", "deploy : TTY=pts/0 ; PWD=/home/deploy ; USER=root ; COMMAND=/bin/ls",
            "sudo: deploy : TTY=pts/0 ; PWD=/home/deploy ; USER=root ; COMMAND=/bin/ls"},
           // syslog-ng with ISO dates
           {"<38>2026-11-30T11:07:06+00:00 db-02 sudo[991]: pam_unix(sudo:session): session opened", 4, 6,
            "2026-11-30T11:07:06", "db-02", "sudo", "991", "", "", "pam_unix(sudo:session): session opened",
            "sudo[991]: pam_unix(sudo:session): session opened"},
           {"<4>Nov 30 11:07:06 web-01 kernel: [12345.678901] EXT4-fs warning (device sda1): Directory index full!", 0, 4,
            "2026-11-30T11:07:06", "web-01", "kernel", "", "", "", "[12345.678901] EXT4-fs warning (device sda1): Directory index full!",
            "kernel: [12345.678901] EXT4-fs warning (device sda1): Directory index full!"},
           // a local kernel line has no hostname
           {"<6>Nov 30 11:07:06 kernel: usb 1-1: new high-speed USB device", 0, 6, "2026-11-30T11:07:06", "", "kernel", "",
            "", "", "usb 1-1: new high-speed USB device", "kernel: usb 1-1: new high-speed USB device"},
           {"<78>Nov 30 11:00:01 web-01 CRON[4411]: (root) CMD (run-parts /etc/cron.hourly)", 9, 6, "2026-11-30T11:00:01",
            "web-01", "CRON", "4411", "", "", "(root) CMD (run-parts /etc/cron.hourly)",
            "CRON[4411]: (root) CMD (run-parts /etc/cron.hourly)"},
           {"<22>Nov 30 11:07:06 mx1 postfix/smtpd[1234]: connect from unknown[192.0.2.10]", 2, 6, "2026-11-30T11:07:06",
            "mx1", "postfix/smtpd", "1234", "", "", "connect from unknown[192.0.2.10]",
            "postfix/smtpd[1234]: connect from unknown[192.0.2.10]"},
           {"<190>Nov 30 11:07:06 web-01 nginx: 10.0.0.1 - - [30/Nov/2026:11:07:06 +0000] \"GET / HTTP/1.1\" 200 612", 23, 6,
            "2026-11-30T11:07:06", "web-01", "nginx", "", "", "", "10.0.0.1 - - [30/Nov/2026:11:07:06 +0000] \"GET / HTTP/1.1\" 200 612",
            "nginx: 10.0.0.1 - - [30/Nov/2026:11:07:06 +0000] \"GET / HTTP/1.1\" 200 612"},
           {"<150>Nov 30 11:07:06 lb1 haproxy[3312]: 10.0.0.1:55412 [30/Nov/2026:11:07:06.123] fe be/srv1 200 512", 18, 6,
            "2026-11-30T11:07:06", "lb1", "haproxy", "3312", "", "", "10.0.0.1:55412 [30/Nov/2026:11:07:06.123] fe be/srv1 200 512",
            "haproxy[3312]: 10.0.0.1:55412 [30/Nov/2026:11:07:06.123] fe be/srv1 200 512"},
           {"<30>Nov 30 11:07:06 node-3 dockerd[812]: time=\"2026-11-30T11:07:06.1Z\" level=info msg=\"ok\"", 3, 6,
            "2026-11-30T11:07:06", "node-3", "dockerd", "812", "", "", "time=\"2026-11-30T11:07:06.1Z\" level=info msg=\"ok\"",
            "dockerd[812]: time=\"2026-11-30T11:07:06.1Z\" level=info msg=\"ok\""},
           // logback's SyslogAppender: no TAG
           {"<11>Nov 30 11:07:06 app-01 ERROR com.example.Service - Failed to connect", 1, 3, "2026-11-30T11:07:06",
            "app-01", "", "", "", "", "ERROR com.example.Service - Failed to connect", "ERROR com.example.Service - Failed to connect"},
           // Cisco IOS: sequence number, '*' for a clock never synchronised, milliseconds
           {"<189>123: *Mar  1 00:01:02.345: %LINK-3-UPDOWN: Interface FastEthernet0/1, changed state to up", 23, 5,
            "2026-03-01T00:01:02.345", "", "%LINK-3-UPDOWN", "", "", "", "Interface FastEthernet0/1, changed state to up",
            "%LINK-3-UPDOWN: Interface FastEthernet0/1, changed state to up"},
           // Cisco IOS, synchronised, with the zone
           {"<189>4567: Nov 30 11:07:06.123 UTC: %SYS-5-CONFIG_I: Configured from console by admin on vty0", 23, 5,
            "2026-11-30T11:07:06.123", "", "%SYS-5-CONFIG_I", "", "", "", "Configured from console by admin on vty0",
            "%SYS-5-CONFIG_I: Configured from console by admin on vty0"},
           // Cisco NX-OS style "." marker (clock synchronised once, not now)
           {"<187>88: .Nov 30 11:07:06: %ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/7 is down", 23, 3,
            "2026-11-30T11:07:06", "", "%ETHPORT-5-IF_DOWN_LINK_FAILURE", "", "", "", "Interface Ethernet1/7 is down",
            "%ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/7 is down"},
           // Cisco ASA: a year in the timestamp
           {"<166>Nov 30 2026 11:07:06: %ASA-6-302013: Built inbound TCP connection 123 for outside:198.51.100.1/5000", 20, 6,
            "2026-11-30T11:07:06", "", "%ASA-6-302013", "", "", "", "Built inbound TCP connection 123 for outside:198.51.100.1/5000",
            "%ASA-6-302013: Built inbound TCP connection 123 for outside:198.51.100.1/5000"},
           {"<166>Nov 30 2026 11:07:06 asa-fw01 : %ASA-6-302014: Teardown TCP connection 123", 20, 6, "2026-11-30T11:07:06",
            "asa-fw01", "", "", "", "", ": %ASA-6-302014: Teardown TCP connection 123", ": %ASA-6-302014: Teardown TCP connection 123"},
           // Juniper SRX, RFC 5424 with structured data
           {"<14>1 2026-11-30T11:07:06.123Z srx-01 RT_FLOW - RT_FLOW_SESSION_CREATE [junos@2636.1.1.1.2.129 source-address=\"10.0.0.1\"] session created",
            1, 6, "2026-11-30T11:07:06.123", "srx-01", "RT_FLOW", "", "RT_FLOW_SESSION_CREATE",
            "[junos@2636.1.1.1.2.129 source-address=\"10.0.0.1\"]", "session created",
            "RT_FLOW - RT_FLOW_SESSION_CREATE [junos@2636.1.1.1.2.129 source-address=\"10.0.0.1\"] session created"},
           // Fortinet: key=value, no timestamp or hostname
           {"<189>date=2026-11-30 time=11:07:06 devname=\"FGT60E\" logid=\"0000000013\" type=\"traffic\"", 23, 5, "", "", "", "",
            "", "", "date=2026-11-30 time=11:07:06 devname=\"FGT60E\" logid=\"0000000013\" type=\"traffic\"",
            "date=2026-11-30 time=11:07:06 devname=\"FGT60E\" logid=\"0000000013\" type=\"traffic\""},
           // Palo Alto: CSV after the hostname
           {"<14>Nov 30 11:07:06 PA-VM 1,2026/11/30 11:07:06,007200001056,TRAFFIC,end,1", 1, 6, "2026-11-30T11:07:06", "PA-VM",
            "", "", "", "", "1,2026/11/30 11:07:06,007200001056,TRAFFIC,end,1", "1,2026/11/30 11:07:06,007200001056,TRAFFIC,end,1"},
           // F5 BIG-IP: a level word before the TAG
           {"<133>Nov 30 11:07:06 bigip1 notice mcpd[5318]: 01070410:5: Removed subscription", 16, 5, "2026-11-30T11:07:06",
            "bigip1", "", "", "", "", "notice mcpd[5318]: 01070410:5: Removed subscription",
            "notice mcpd[5318]: 01070410:5: Removed subscription"},
           // NXLog from Windows, RFC 5424
           {"<14>1 2026-11-30T11:07:06.000000+01:00 WIN-SRV01.corp.example.com Microsoft-Windows-Security-Auditing 612 - "
            "[NXLOG@14506 EventReceivedTime=\"2026-11-30 11:07:06\"] An account was successfully logged on.",
            1, 6, "2026-11-30T10:07:06", "WIN-SRV01.corp.example.com", "Microsoft-Windows-Security-Auditing", "612", "",
            "[NXLOG@14506 EventReceivedTime=\"2026-11-30 11:07:06\"]", "An account was successfully logged on.",
            "Microsoft-Windows-Security-Auditing 612 - [NXLOG@14506 EventReceivedTime=\"2026-11-30 11:07:06\"] An account was successfully logged on."},
           // VMware ESXi: RFC 3339 time, 3164 shape
           {"<166>2026-11-30T11:07:06.123Z esx-01.example.com Hostd: info hostd[2099B70] [Originator@6876 sub=Vimsvc] Task Created",
            20, 6, "2026-11-30T11:07:06.123", "esx-01.example.com", "Hostd", "", "", "",
            "info hostd[2099B70] [Originator@6876 sub=Vimsvc] Task Created",
            "Hostd: info hostd[2099B70] [Originator@6876 sub=Vimsvc] Task Created"},
           // IPv6 and FQDN hostnames
           {"<13>Nov 30 11:07:06 2001:db8::42 app: hello", 1, 5, "2026-11-30T11:07:06", "2001:db8::42", "app", "", "", "",
            "hello", "app: hello"},
           {"<13>Nov 30 11:07:06 host.sub.example.com app: hi", 1, 5, "2026-11-30T11:07:06", "host.sub.example.com", "app", "",
            "", "", "hi", "app: hi"},
           // macOS: dotted TAG
           {"<5>Nov 30 11:07:06 MacBook-Pro com.apple.xpc.launchd[1] (com.apple.mdworker[2812]): Service exited", 0, 5,
            "2026-11-30T11:07:06", "MacBook-Pro", "com.apple.xpc.launchd", "1", "", "", "(com.apple.mdworker[2812]): Service exited",
            "com.apple.xpc.launchd[1] (com.apple.mdworker[2812]): Service exited"},
           // an embedded router: TAG but no hostname
           {"<14>Nov 30 11:07:06 dnsmasq-dhcp[1234]: DHCPACK(br0) 192.168.1.5", 1, 6, "2026-11-30T11:07:06", "", "dnsmasq-dhcp",
            "1234", "", "", "DHCPACK(br0) 192.168.1.5", "dnsmasq-dhcp[1234]: DHCPACK(br0) 192.168.1.5"},
           // single-digit day, lower-case month
           {"<13>Dec  1 00:00:00 h a: m", 1, 5, "2026-12-01T00:00:00", "h", "a", "", "", "", "m", "a: m"},
           {"<13>nov 30 11:07:06 h a: m", 1, 5, "2026-11-30T11:07:06", "h", "a", "", "", "", "m", "a: m"},
           // missing PRI: user.notice, Invalid, kept whole, fields still read
           {"Nov 30 11:07:06 web-01 sshd[1]: no pri", 1, 5, "2026-11-30T11:07:06", "web-01", "sshd", "1", "", "", "no pri",
            "Nov 30 11:07:06 web-01 sshd[1]: no pri", EventStatus::invalid},
           // RFC 5424 NILVALUEs everywhere and a BOM
           {"<13>1 - - - - - - \xEF\xBB\xBFhello", 1, 5, "", "", "", "", "", "", "hello", "- - - - \xEF\xBB\xBFhello"},
           // structured data with escaped quote, backslash and bracket
           {R"(<13>1 2026-11-30T11:07:06Z h a p m [id@1 k="a\]b\"c\\"] msg)", 1, 5, "2026-11-30T11:07:06", "h", "a", "p", "m",
            R"([id@1 k="a\]b\"c\\"])", "msg", R"(a p m [id@1 k="a\]b\"c\\"] msg)"},
           // loadgen's Apache line
           {"<134>Nov 30 11:07:06 web-07 apache[4242]: 10.1.2.3 - - \"GET /lg/00001/0000000042 HTTP/1.1\" 200 512", 16, 6,
            "2026-11-30T11:07:06", "web-07", "apache", "4242", "", "", "10.1.2.3 - - \"GET /lg/00001/0000000042 HTTP/1.1\" 200 512",
            "apache[4242]: 10.1.2.3 - - \"GET /lg/00001/0000000042 HTTP/1.1\" 200 512"},
       })
    check_parsed(x);
}

// clang-format on
TEST_CASE("parser marks a line without a valid PRI invalid with priority 13 and keeps it whole", "[parser]") {
  for (const std::string line : {"no pri here", "<192>too big", "<01>leading zero", "<>empty", "<1234>long", "<13"}) {
    INFO(line);
    const Parsed p = parse_line(line);
    CHECK(p.e.status == EventStatus::invalid);
    CHECK(line.substr(p.e.body_offset, p.e.body_length) == line);
    CHECK(int{p.e.facility} == 1);
    CHECK(int{p.e.severity} == 5);
  }
  CHECK(int{parse_line("<0>x").e.facility} == 0);
  CHECK(int{parse_line("<191>x").e.facility} == 23);
}

TEST_CASE("parser infers the year of an RFC 3164 timestamp around New Year", "[parser]") {
  const ParseClock new_year = ParseClock::at(utc_ms("2027-01-01T00:00:10"));
  CHECK(parse_line("<13>Dec 31 23:59:59 h a: late", new_year).e.timestamp_ms == utc_ms("2026-12-31T23:59:59"));
  CHECK(parse_line("<13>Jan  1 00:00:05 h a: on time", new_year).e.timestamp_ms == utc_ms("2027-01-01T00:00:05"));
  const ParseClock old_year = ParseClock::at(utc_ms("2026-12-31T23:59:50"));
  CHECK(parse_line("<13>Jan  1 00:00:05 h a: a fast clock", old_year).e.timestamp_ms == utc_ms("2027-01-01T00:00:05"));
  CHECK(parse_line("<13>Dec 31 23:59:49 h a: just now", old_year).e.timestamp_ms == utc_ms("2026-12-31T23:59:49"));
  // A device that lost its clock (Cisco's "*Mar  1") stays in the current year.
  CHECK(parse_line("<13>Mar  1 00:00:00 h a: x").e.timestamp_ms == utc_ms("2026-03-01T00:00:00"));
  // Feb 29 of a leap year, parsed in that year
  CHECK(parse_line("<13>Feb 29 12:00:00 h a: x", ParseClock::at(utc_ms("2028-03-01T00:00:00"))).e.timestamp_ms ==
        utc_ms("2028-02-29T12:00:00"));
}

// A BSD time read again (the thread remembers the last one: syslog_parser.cc's BsdMemo) reads as it
// would fresh, whatever clock it is read with: the same text with ".000" (never remembered) is
// the reference.
TEST_CASE("parser reads a BSD time it read just before as it reads it fresh, under every clock", "[parser]") {
  const std::vector<ParseClock> clocks = {ParseClock::at(utc_ms("2027-01-01T00:00:10")),
                                          ParseClock::at(utc_ms("2026-12-31T23:59:50")),
                                          ParseClock::at(utc_ms("2026-12-31T23:30:00"), 3600),
                                          ParseClock::at(utc_ms("2026-06-15T12:00:00"), -18000),
                                          ParseClock::at(utc_ms("2028-03-01T00:00:00")),
                                          ParseClock::at(kNowMs, 3600),
                                          ParseClock::at(kNowMs)};
  const std::vector<std::string> times = {"Dec 31 23:59:59", "Jan  1 00:00:05", "Feb 29 12:00:00",
                                          "Nov 30 12:00:00", "Jun 15 07:00:00", "Nov  3 09:08:07"};
  for (const std::string& time : times)
    for (const ParseClock& warm : clocks)
      for (const ParseClock& clock : clocks) {
        parse_line("<13>" + time + " h a: warm", warm);  // remembered with another clock
        const Parsed again = parse_line("<13>" + time + " h a: x", clock);
        const Parsed fresh = parse_line("<13>" + time + ".000 h a: x", clock);
        INFO(time << " at " << clock.now_ms << " (zone " << clock.local_offset_s << "), warmed at " << warm.now_ms);
        CHECK(again.e.timestamp_ms == fresh.e.timestamp_ms);
        CHECK(again.e.timestamp_from_header);
        CHECK(again.e.host.length == 1);
        CHECK(parse_line("<13>" + time + " h a: x", clock).e.timestamp_ms ==
              fresh.e.timestamp_ms);  // a hit, same clock
      }
  // A fraction after a remembered time is read, not taken from the memory; a zone after it still
  // counts; the year form is never taken for it.
  parse_line("<13>Nov 30 12:00:00 h a: x");
  CHECK(parse_line("<13>Nov 30 12:00:00.250 h a: x").e.timestamp_ms == utc_ms("2026-11-30T12:00:00.250"));
  const ParseClock paris = ParseClock::at(kNowMs, 3600);
  parse_line("<13>Nov 30 12:00:00 h a: x", paris);
  CHECK(parse_line("<13>Nov 30 12:00:00 UTC: %X-1-Y: z", paris).e.timestamp_ms == utc_ms("2026-11-30T12:00:00"));
  CHECK(parse_line("<13>Nov 30 12:00:00 h a: x", paris).e.timestamp_ms == utc_ms("2026-11-30T11:00:00"));
  parse_line("<13>Nov 30 12:00:00 h a: x");
  CHECK(parse_line("<13>Nov 30 2025 12:00:00 h a: x").e.timestamp_ms == utc_ms("2025-11-30T12:00:00"));
}

TEST_CASE("parser reads RFC 3164 time in the agent's zone and RFC 3339 offsets exactly", "[parser]") {
  const ParseClock paris = ParseClock::at(kNowMs, 3600);
  CHECK(parse_line("<13>Nov 30 12:00:00 h a: x", paris).e.timestamp_ms == utc_ms("2026-11-30T11:00:00"));
  CHECK(parse_line("<189>1: Nov 30 12:00:00.250 UTC: %X-1-Y: z", paris).e.timestamp_ms ==
        utc_ms("2026-11-30T12:00:00.250"));
  CHECK(parse_line("<13>1 2026-11-30T12:00:00.5-05:30 h a - - - x", paris).e.timestamp_ms ==
        utc_ms("2026-11-30T17:30:00.500"));
  CHECK(ParseClock::at(utc_ms("2026-12-31T23:30:00"), 3600).local_year == 2027);
}

TEST_CASE("parser leaves the arrival time on a timestamp that does not parse", "[parser]") {
  for (const std::string line : {"<13>1 2026-13-01T00:00:00Z h a - - - x", "<13>1 2026-11-30T25:00:00Z h a - - - x",
                                 "<13>1 2026-11-30 h a - - - x", "<13>Nov 32 11:07:06 h a: x",
                                 "<13>Foo 30 11:07:06 h a: x", "<13>1 2026-11-30T12:00:00+0100 h a - - - x"}) {
    INFO(line);
    const Parsed p = parse_line(line);
    CHECK_FALSE(p.e.timestamp_from_header);
    CHECK(p.e.timestamp_ms == kNowMs);
  }
}

TEST_CASE("parser reports where the header fields are for keepFields", "[parser]") {
  const std::string line = "<34>1 2003-10-11T22:14:15.003Z mymachine su - ID47 - failed";
  EventRecord e;
  HeaderLayout layout;
  parse_syslog(line, ParseClock::at(kNowMs), e, &layout);
  CHECK(line.substr(0, layout.pri_end) == "<34>");
  CHECK(line.substr(layout.version.offset, layout.version.length) == "1 ");
  CHECK(line.substr(layout.timestamp.offset, layout.timestamp.length) == "2003-10-11T22:14:15.003Z ");
  CHECK(line.substr(layout.hostname.offset, layout.hostname.length) == "mymachine ");
}

TEST_CASE("days_from_civil agrees with libc across eras", "[parser]") {
  for (const char* date : {"1970-01-01T00:00:00", "2000-02-29T00:00:00", "2026-11-30T00:00:00", "2100-03-01T00:00:00",
                           "1969-12-31T00:00:00"}) {
    INFO(date);
    const std::string d(date);
    CHECK(days_from_civil(std::stoi(d.substr(0, 4)), static_cast<unsigned>(std::stoi(d.substr(5, 2))),
                          static_cast<unsigned>(std::stoi(d.substr(8, 2)))) *
              86'400'000 ==
          utc_ms(d));
  }
}

TEST_CASE("ParseClock::refresh looks the zone up again once a second has passed, under steady traffic too",
          "[syslog]") {
  ParseClock clock = ParseClock::now();
  const int32_t zone = clock.local_offset_s;
  clock.local_offset_s = zone + 3600;  // as if the zone changed (DST) since it was looked up...
  clock.refresh();                     // ...less than a second ago: kept
  CHECK(clock.local_offset_s == zone + 3600);
  clock.zone_checked_ms -= 1500;  // reads every millisecond since, the last look 1.5 s ago
  clock.now_ms -= 1;
  clock.refresh();
  CHECK(clock.local_offset_s == zone);
}
