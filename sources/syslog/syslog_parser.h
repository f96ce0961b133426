#pragma once
// Reads the syslog header of one frame in place, without allocating: PRI, VERSION, the
// timestamp (to ms since the epoch), HOSTNAME, APP-NAME/TAG, PROCID, MSGID, STRUCTURED-DATA
// and where MSG starts, for RFC 5424 and RFC 3164 and their common real-world variants
// (RFC 3339 timestamps in 3164 lines, Cisco's "seq: *Mmm dd hh:mm:ss.mmm:" prefix, missing
// PRI, FQDN and IPv6 hostnames).
//
// Policy, as Flume's MultiportSyslogTCPSource:
//  - a frame without a valid PRI gets RFC 3164's default priority 13 (user.notice) and status
//    Invalid; its body is the whole frame, but the fields after it are still parsed;
//  - the body is the frame without PRI, VERSION, timestamp and HOSTNAME (for 5424 it starts
//    at APP-NAME); `message` is MSG alone.
//  - a timestamp that does not parse leaves the event with its time of arrival.
//  - RFC 3164 timestamps have no year and no zone: they are read in the agent's time zone,
//    in the year that puts them within [now - 334 days, now + 31 days].

#include <cstdint>
#include <string_view>

#include "agent/api/event_batch.h"

namespace sluice::syslog {

// "Now" for one read's worth of frames: the arrival time and what 3164 timestamps need.
struct ParseClock {
  int64_t now_ms = 0;
  int32_t local_offset_s = 0;  // the agent's zone: local time minus UTC
  int32_t local_year = 1970;
  int64_t zone_checked_ms = 0;  // when the zone (and year) were last looked up

  // The system clock and zone; call per read, not per event.
  static ParseClock now();
  // Moves to the system clock's time; the zone and year are looked up again once a second has
  // passed since the last look (or the clock went back), so a DST change or a new year shows
  // within a second under any traffic.
  void refresh();
  // A fixed instant, for tests: `now_ms` in a zone `offset_s` east of UTC.
  static ParseClock at(int64_t now_ms, int32_t offset_s = 0);
};

// Where the header fields that keepFields may keep lie in the frame (offset, length), each
// with the space after it, so that a body can be composed without some of them.
struct HeaderLayout {
  uint32_t pri_end = 0;  // "<PRI>" is [0, pri_end)
  Span version;
  Span timestamp;
  Span hostname;
};

// Fills everything but offset/length/port/client of `event` from `frame`.
void parse_syslog(std::string_view frame, const ParseClock& clock, EventRecord& event, HeaderLayout* layout = nullptr);

// Days since 1970-01-01 of a proleptic Gregorian date (month 1..12).
int64_t days_from_civil(int64_t year, unsigned month, unsigned day);

}  // namespace sluice::syslog
