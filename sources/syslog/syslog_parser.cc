#include "sources/syslog/syslog_parser.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <ctime>

#include "sources/syslog/byte_scan.h"

namespace sluice::syslog {
namespace {

constexpr size_t npos = std::string_view::npos;
constexpr int64_t kDayMs = 86'400'000;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The bytes that end a TAG: one load per byte instead of three comparisons (the TAG's loop was
// the parser's hottest line).
constexpr auto kEndsTag = [] {
  std::array<bool, 256> ends{};
  ends['['] = ends[':'] = ends[' '] = true;
  return ends;
}();

// The value of the n digits at s[i..i+n), or -1 unless they are all digits and in range.
int digits(std::string_view s, size_t i, size_t n) {
  if (i + n > s.size()) return -1;
  int value = 0;
  for (size_t k = i; k < i + n; ++k) {
    if (!is_digit(s[k])) return -1;
    value = value * 10 + (s[k] - '0');
  }
  return value;
}

Span span(size_t from, size_t to) {
  if (to <= from || from > UINT16_MAX || to - from > UINT16_MAX) return {};
  return {static_cast<uint16_t>(from), static_cast<uint16_t>(to - from)};
}

// The end of the space-delimited token at pos. Most tokens (a host, a tag, a time) are short: a
// plain loop finds their end before the 16-byte scan would have set up; a longer one goes on with it.
size_t token_end(std::string_view s, size_t pos) {
  const size_t head_end = std::min(s.size(), pos + 16);
  for (size_t i = pos; i < head_end; ++i)
    if (s[i] == ' ') return i;
  return find_either(s, head_end, ' ', ' ');
}

// "<PRI>" with 1-3 digits, value 0..191, no leading zero unless "0" (RFC 5424 6.2.1).
// Returns the header length consumed, or 0 when there is no valid PRI.
size_t parse_pri(std::string_view s, int& pri) {
  if (s.size() < 3 || s[0] != '<') return 0;
  size_t i = 1;
  int value = 0;
  while (i < s.size() && i <= 4 && is_digit(s[i])) value = value * 10 + (s[i++] - '0');
  const size_t count = i - 1;
  if (count == 0 || count > 3 || i >= s.size() || s[i] != '>') return 0;
  if (count > 1 && s[1] == '0') return 0;
  if (value > 191) return 0;
  pri = value;
  return i + 1;
}

// Milliseconds of a fraction ".d[d...]" at s[i] (i at the '.'); advances i past it.
int parse_fraction(std::string_view s, size_t& i) {
  if (i >= s.size() || s[i] != '.' || i + 1 >= s.size() || !is_digit(s[i + 1])) return 0;
  ++i;
  int ms = 0, scale = 100;
  for (; i < s.size() && is_digit(s[i]); ++i, scale /= 10) ms += (s[i] - '0') * scale;
  return ms;
}

int64_t clock_ms(int64_t days, int hour, int minute, int second) {
  return days * kDayMs + ((hour * 60 + minute) * 60 + std::min(second, 59)) * int64_t{1000};
}

// days_from_civil for the date of the previous call on this thread, which is nearly always
// the date asked for again.
int64_t days_of(int64_t year, unsigned month, unsigned day) {
  thread_local int64_t last_year = -1, last_days = 0;
  thread_local unsigned last_month = 0, last_day = 0;
  if (year != last_year || month != last_month || day != last_day) {
    last_days = days_from_civil(year, month, day);
    last_year = year;
    last_month = month;
    last_day = day;
  }
  return last_days;
}

// RFC 3339 (RFC 5424's TIMESTAMP): YYYY-MM-DDThh:mm:ss[.frac](Z|+hh:mm|-hh:mm). Returns the
// end of the timestamp, or npos.
size_t parse_rfc3339(std::string_view s, size_t pos, int64_t& ms) {
  const int year = digits(s, pos, 4), month = digits(s, pos + 5, 2), day = digits(s, pos + 8, 2);
  const int hour = digits(s, pos + 11, 2), minute = digits(s, pos + 14, 2), second = digits(s, pos + 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60)
    return npos;
  if (s[pos + 4] != '-' || s[pos + 7] != '-' || (s[pos + 10] != 'T' && s[pos + 10] != 't') || s[pos + 13] != ':' ||
      s[pos + 16] != ':')
    return npos;
  size_t i = pos + 19;
  const int fraction = parse_fraction(s, i);
  if (i >= s.size()) return npos;
  int offset_minutes = 0;
  if (s[i] == 'Z' || s[i] == 'z') {
    ++i;
  } else if (s[i] == '+' || s[i] == '-') {
    const int oh = digits(s, i + 1, 2), om = digits(s, i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59 || s[i + 3] != ':') return npos;
    offset_minutes = (s[i] == '-' ? -1 : 1) * (oh * 60 + om);
    i += 6;
  } else {
    return npos;
  }
  ms = clock_ms(days_of(year, static_cast<unsigned>(month), static_cast<unsigned>(day)), hour, minute, second) -
       offset_minutes * int64_t{60'000} + fraction;
  return i;
}

int month_of(std::string_view m) {
  if (m.size() != 3) return 0;
  // The three letters, lower-cased, as one number: one comparison per month.
  const uint32_t key = (uint32_t(m[0] | 0x20) << 16) | (uint32_t(m[1] | 0x20) << 8) | uint32_t(m[2] | 0x20);
  constexpr auto k = [](const char* name) {
    return (uint32_t(name[0]) << 16) | (uint32_t(name[1]) << 8) | uint32_t(name[2]);
  };
  static constexpr uint32_t kMonths[] = {k("jan"), k("feb"), k("mar"), k("apr"), k("may"), k("jun"),
                                         k("jul"), k("aug"), k("sep"), k("oct"), k("nov"), k("dec")};
  for (int i = 0; i < 12; ++i)
    if (kMonths[i] == key) return i + 1;
  return 0;
}

// The year of a BSD time without one: the one that puts it nearest to now (no more than 31 days
// ahead). `at(y)` is the time in year y.
template <class At>
int64_t nearest_year(const ParseClock& clock, At&& at) {
  const int64_t ms = at(clock.local_year);
  if (ms > clock.now_ms + 31 * kDayMs) return at(clock.local_year - 1);   // December's line in January
  if (ms < clock.now_ms - 334 * kDayMs) return at(clock.local_year + 1);  // a fast clock at New Year
  return ms;
}

// The last "Mmm dd hh:mm:ss" (no year, no fraction) read on this thread and its time in the years
// around the clock's: a sender's lines of one second share it, so the next one costs a comparison
// of 15 bytes instead of a parse (the parse was a third of the syslog parser's time).
struct BsdMemo {
  std::array<char, 15> text{};
  int32_t local_year = 0, local_offset_s = 0;
  int64_t ms_in[3] = {};  // the year before, the clock's year, the year after
  bool valid = false;
};
thread_local BsdMemo tl_bsd_memo;

// BSD: "Mmm dd hh:mm:ss", "Mmm  d hh:mm:ss", "Mmm dd yyyy hh:mm:ss", each with an optional
// ".fff" (Cisco), in the agent's zone; the year, when absent, is the one that puts the time
// nearest to now (no more than 31 days ahead). Returns the end, or npos.
size_t parse_bsd(std::string_view s, size_t pos, const ParseClock& clock, int64_t& ms) {
  if (pos + 15 > s.size()) return npos;
  BsdMemo& memo = tl_bsd_memo;
  const bool plain_end = pos + 15 == s.size() || s[pos + 15] != '.';  // no fraction follows
  if (plain_end && memo.valid && memo.local_year == clock.local_year && memo.local_offset_s == clock.local_offset_s &&
      std::memcmp(memo.text.data(), s.data() + pos, memo.text.size()) == 0) {
    ms = nearest_year(clock, [&](int y) { return memo.ms_in[y - clock.local_year + 1]; });
    return pos + 15;
  }
  const int month = month_of(s.substr(pos, 3));
  if (month == 0 || s[pos + 3] != ' ' || s[pos + 6] != ' ') return npos;
  const int day = s[pos + 4] == ' ' ? digits(s, pos + 5, 1) : digits(s, pos + 4, 2);
  size_t i = pos + 7;
  int year = -1;
  if (digits(s, i, 4) >= 0 && i + 4 < s.size() && s[i + 4] == ' ') {
    year = digits(s, i, 4);
    i += 5;
  }
  const int hour = digits(s, i, 2), minute = digits(s, i + 3, 2), second = digits(s, i + 6, 2);
  if (day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60 ||
      s[i + 2] != ':' || s[i + 5] != ':')
    return npos;
  i += 8;
  const int fraction = parse_fraction(s, i);
  auto at = [&](int y) {
    return clock_ms(days_of(y, static_cast<unsigned>(month), static_cast<unsigned>(day)), hour, minute, second) -
           clock.local_offset_s * int64_t{1000} + fraction;
  };
  if (year >= 0) {
    ms = at(year);
    return i;
  }
  ms = nearest_year(clock, at);
  if (i == pos + 15) {  // the plain form: remembered for the lines that repeat it
    std::memcpy(memo.text.data(), s.data() + pos, memo.text.size());
    memo.local_year = clock.local_year;
    memo.local_offset_s = clock.local_offset_s;
    for (int k = 0; k < 3; ++k) memo.ms_in[k] = at(clock.local_year - 1 + k);
    memo.valid = true;
  }
  return i;
}

// After a BSD time: an optional zone name ("UTC", "CET"; only UTC/GMT change the reading) and
// Cisco's ':' before the message. Returns the end.
size_t skip_bsd_suffix(std::string_view s, size_t i, const ParseClock& clock, int64_t& ms) {
  if (i + 1 < s.size() && s[i] == ' ' && is_alpha(s[i + 1])) {
    size_t k = i + 1;
    while (k < s.size() && k - i <= 5 && s[k] >= 'A' && s[k] <= 'Z') ++k;
    if (k < s.size() && s[k] == ':' && k - i >= 3) {  // a zone is only a zone if ':' follows
      const std::string_view zone = s.substr(i + 1, k - i - 1);
      if (zone == "UTC" || zone == "GMT") ms += clock.local_offset_s * int64_t{1000};
      i = k;
    }
  }
  if (i < s.size() && s[i] == ':') ++i;
  return i;
}

// RFC 5424 after "<PRI>1 ": TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA [SP MSG].
void parse_rfc5424(std::string_view s, size_t pos, EventRecord& e, HeaderLayout* layout) {
  Span* fields[] = {nullptr, &e.host, &e.app, &e.procid, &e.msgid};
  size_t body = s.size();
  for (int field = 0; field < 5 && pos < s.size(); ++field) {
    const size_t end = token_end(s, pos);
    const bool nil = end == pos + 1 && s[pos] == '-';
    const size_t next = std::min(end + 1, s.size());
    if (field == 0) {
      int64_t ms = 0;
      if (!nil && parse_rfc3339(s, pos, ms) == end) {
        e.timestamp_ms = ms;
        e.timestamp_from_header = true;
      }
      if (layout) layout->timestamp = span(pos, next);
    } else if (!nil) {
      *fields[field] = span(pos, end);
    }
    if (field == 1) {
      body = next;
      if (layout) layout->hostname = span(pos, next);
    }
    pos = next;
  }
  e.body_offset = static_cast<uint32_t>(body);
  e.message_offset = static_cast<uint32_t>(std::min(pos, s.size()));
  if (pos >= s.size()) return;
  const size_t sd_start = pos;
  if (s[pos] == '-') {
    ++pos;
  } else {
    // One or more [SD-ID param="value" ...] elements; values may escape \" \\ \].
    while (pos < s.size() && s[pos] == '[') {
      bool in_value = false;
      for (++pos; pos < s.size();) {
        pos = in_value ? find_either(s, pos, '"', '\\') : find_either(s, pos, '"', ']');
        if (pos >= s.size()) break;
        if (s[pos] == '\\') {
          pos += 2;  // the escaped character, whatever it is
        } else if (s[pos] == '"') {
          in_value = !in_value;
          ++pos;
        } else {
          ++pos;  // past ']'
          break;
        }
      }
    }
    pos = std::min(pos, s.size());
    e.structured_data = span(sd_start, pos);
  }
  if (pos < s.size() && s[pos] == ' ') ++pos;
  if (s.substr(pos, 3) == "\xEF\xBB\xBF") pos += 3;  // the BOM that marks MSG as UTF-8
  e.message_offset = static_cast<uint32_t>(pos);
}

// RFC 3164 and its variants: [seq ": "] ['*' | '.'] [TIMESTAMP [zone] [':'] SP [HOSTNAME SP]]
// [TAG ['[' PID ']'] ':' SP] MSG.
void parse_rfc3164(std::string_view s, size_t pos, const ParseClock& clock, EventRecord& e, HeaderLayout* layout) {
  size_t i = pos;
  if (i < s.size() && is_digit(s[i])) {  // Cisco's sequence number "000123: "
    size_t k = i;
    while (k < s.size() && k - i < 10 && is_digit(s[k])) ++k;
    if (k + 1 < s.size() && s[k] == ':' && s[k + 1] == ' ') i = k + 2;
  }
  if (i + 1 < s.size() && (s[i] == '*' || s[i] == '.') && is_alpha(s[i + 1])) ++i;  // Cisco: clock not synced
  const size_t time_start = i;
  int64_t ms = 0;
  size_t end = npos;
  if (i < s.size() && is_digit(s[i])) {
    end = parse_rfc3339(s, i, ms);
  } else if (i < s.size() && is_alpha(s[i])) {
    end = parse_bsd(s, i, clock, ms);
    if (end != npos) end = skip_bsd_suffix(s, end, clock, ms);
  }
  const bool has_time = end != npos && (end == s.size() || s[end] == ' ');
  if (has_time) {
    e.timestamp_ms = ms;
    e.timestamp_from_header = true;
    i = std::min(end + 1, s.size());
    if (layout) layout->timestamp = span(time_start, i);
    // A HOSTNAME follows a timestamp, unless the next token is already the TAG or a Cisco
    // mnemonic ("sshd[12]:", "kernel:", "%LINK-3-UPDOWN:").
    const size_t host_end = token_end(s, i);
    const std::string_view token = s.substr(i, host_end - i);
    if (host_end < s.size() && !token.empty() && token.back() != ':' && token.find('[') == npos && token[0] != '%') {
      e.host = span(i, host_end);
      if (layout) layout->hostname = span(i, host_end + 1);
      i = host_end + 1;
    }
  }
  e.body_offset = static_cast<uint32_t>(i);
  // TAG: up to 48 characters other than space, '[' and ':', then "[PID]" and/or ':'.
  size_t tag_end = i;
  const size_t tag_limit = std::min(s.size(), i + 48);
  while (tag_end < tag_limit && !kEndsTag[static_cast<unsigned char>(s[tag_end])]) ++tag_end;
  size_t message = i;
  if (tag_end > i && tag_end < s.size() && s[tag_end] == '[') {
    const size_t close = s.find(']', tag_end);
    if (close != npos && close - tag_end <= 33) {
      e.app = span(i, tag_end);
      e.procid = span(tag_end + 1, close);
      message = close + 1;
      if (message < s.size() && s[message] == ':') ++message;
    }
  } else if (tag_end > i && tag_end < s.size() && s[tag_end] == ':') {
    e.app = span(i, tag_end);
    message = tag_end + 1;
  }
  if (message != i && message < s.size() && s[message] == ' ') ++message;
  e.message_offset = static_cast<uint32_t>(std::min(message, s.size()));
}

}  // namespace

int64_t days_from_civil(int64_t year, unsigned month, unsigned day) {
  // Counting years from March makes the leap day the last day of the year.
  year -= month <= 2;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

ParseClock ParseClock::at(int64_t now_ms, int32_t offset_s) {
  ParseClock clock;
  clock.now_ms = now_ms;
  clock.zone_checked_ms = now_ms;
  clock.local_offset_s = offset_s;
  // The local year: walk from an estimate to the year whose span holds the local time.
  const int64_t local_days = (now_ms + offset_s * int64_t{1000}) / kDayMs;
  int64_t year = 1970 + local_days / 366;
  while (days_from_civil(year + 1, 1, 1) <= local_days) ++year;
  clock.local_year = static_cast<int32_t>(year);
  return clock;
}

ParseClock ParseClock::now() {
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::time_t seconds = static_cast<std::time_t>(now_ms / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  return at(now_ms, static_cast<int32_t>(local.tm_gmtoff));
}

void ParseClock::refresh() {
  const int64_t system_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  if (system_ms - zone_checked_ms >= 1000 || system_ms < now_ms)
    *this = now();
  else
    now_ms = system_ms;
}

void parse_syslog(std::string_view frame, const ParseClock& clock, EventRecord& e, HeaderLayout* layout) {
  e.timestamp_ms = clock.now_ms;
  e.timestamp_from_header = false;
  e.host = e.app = e.procid = e.msgid = e.structured_data = {};
  e.message_offset = 0;
  e.version = 0;
  int pri = 13;
  const size_t after_pri = parse_pri(frame, pri);
  e.facility = static_cast<uint8_t>(pri / 8);
  e.severity = static_cast<uint8_t>(pri % 8);
  e.status = after_pri ? EventStatus::ok : EventStatus::invalid;
  if (layout) *layout = HeaderLayout{static_cast<uint32_t>(after_pri), {}, {}, {}};
  if (after_pri && frame.size() > after_pri + 1 && frame[after_pri] == '1' && frame[after_pri + 1] == ' ') {
    e.version = 1;
    if (layout) layout->version = span(after_pri, after_pri + 2);
    parse_rfc5424(frame, after_pri + 2, e, layout);
  } else {
    parse_rfc3164(frame, after_pri, clock, e, layout);
  }
  if (e.status == EventStatus::invalid) e.body_offset = 0;  // nothing is dropped from what did not parse
  e.body_offset = std::min<uint32_t>(e.body_offset, static_cast<uint32_t>(frame.size()));
  e.body_length = static_cast<uint32_t>(frame.size()) - e.body_offset;
}

}  // namespace sluice::syslog
