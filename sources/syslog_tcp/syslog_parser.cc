#include "sources/syslog_tcp/syslog_parser.h"

#include <algorithm>
#include <cstdint>

namespace sluice::syslog_tcp {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "<PRI>" with 1-3 digits, value 0..191, no leading zero unless "0" (RFC 5424 6.2.1).
// Returns the header length consumed, or 0 when there is no valid PRI.
size_t parse_pri(std::string_view s, int& pri) {
  if (s.size() < 3 || s[0] != '<') return 0;
  size_t i = 1;
  int value = 0;
  while (i < s.size() && i <= 4 && is_digit(s[i])) value = value * 10 + (s[i++] - '0');
  const size_t digits = i - 1;
  if (digits == 0 || digits > 3 || i >= s.size() || s[i] != '>') return 0;
  if (digits > 1 && s[1] == '0') return 0;
  if (value > 191) return 0;
  pri = value;
  return i + 1;
}

// Skips one space-delimited field and the space after it; npos when none follows.
size_t skip_field(std::string_view s, size_t pos) {
  const size_t space = s.find(' ', pos);
  return space == std::string_view::npos ? space : space + 1;
}

void set_span(uint16_t& offset, uint16_t& length, size_t from, size_t to) {
  if (to <= from || from > UINT16_MAX || to - from > UINT16_MAX) return;
  offset = static_cast<uint16_t>(from);
  length = static_cast<uint16_t>(to - from);
}

// RFC 5424 after "<PRI>1 ": TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA [SP MSG].
size_t body_of_rfc5424(std::string_view s, size_t pos, EventRecord& event) {
  for (int field = 0; field < 5 && pos != std::string_view::npos; ++field) {
    const size_t next = skip_field(s, pos);
    const size_t end = next == std::string_view::npos ? s.size() : next - 1;
    const bool nil = end == pos + 1 && s[pos] == '-';
    if (!nil && field == 1) set_span(event.host_offset, event.host_length, pos, end);
    if (!nil && field == 2) set_span(event.app_offset, event.app_length, pos, end);
    pos = next;
  }
  if (pos == std::string_view::npos || pos >= s.size()) return s.size();
  if (s[pos] == '-') {
    ++pos;
  } else {
    // One or more [SD-ID param="value" ...] elements; values may escape \" \\ \].
    while (pos < s.size() && s[pos] == '[') {
      bool in_value = false;
      ++pos;
      for (; pos < s.size(); ++pos) {
        const char c = s[pos];
        if (in_value && c == '\\') { ++pos; continue; }
        if (c == '"') in_value = !in_value;
        else if (c == ']' && !in_value) break;
      }
      if (pos < s.size()) ++pos;  // past ']'
    }
  }
  if (pos < s.size() && s[pos] == ' ') ++pos;
  return pos;
}

bool is_month(std::string_view m) {
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  for (size_t i = 0; i < kMonths.size(); i += 3)
    if (m == kMonths.substr(i, 3)) return true;
  return false;
}

// RFC 3164: "Mmm dd hh:mm:ss HOSTNAME " before the message; both parts optional in practice.
// The body keeps the TAG ("app[pid]: text"), as Flume's does; the app name is recorded.
size_t body_of_rfc3164(std::string_view s, size_t pos, EventRecord& event) {
  std::string_view rest = s.substr(pos);
  if (rest.size() >= 16 && is_month(rest.substr(0, 3)) && rest[3] == ' ' && rest[6] == ' ' &&
      rest[9] == ':' && rest[12] == ':' && rest[15] == ' ') {
    pos += 16;
    // The hostname, unless what follows is already a tag ("sshd[12]:" or "kernel:").
    const size_t end = s.find(' ', pos);
    if (end != std::string_view::npos && end > pos && s[end - 1] != ':' && s[end - 1] != ']') {
      set_span(event.host_offset, event.host_length, pos, end);
      pos = end + 1;
    }
  }
  // TAG: up to 32 alphanumerics and [._/-], ended by '[' or ':'.
  size_t tag_end = pos;
  while (tag_end < s.size() && tag_end - pos < 48 && s[tag_end] != '[' && s[tag_end] != ':' && s[tag_end] != ' ')
    ++tag_end;
  if (tag_end < s.size() && tag_end > pos && (s[tag_end] == '[' || s[tag_end] == ':'))
    set_span(event.app_offset, event.app_length, pos, tag_end);
  return pos;
}

}  // namespace

void parse_syslog_header(std::string_view frame, EventRecord& event) {
  int pri = 0;
  const size_t after_pri = parse_pri(frame, pri);
  if (after_pri == 0) {
    event.facility = 1;
    event.severity = 5;
    event.status = EventStatus::invalid;
    event.body_offset = 0;
    return;
  }
  event.facility = static_cast<uint8_t>(pri / 8);
  event.severity = static_cast<uint8_t>(pri % 8);
  event.status = EventStatus::ok;
  event.host_length = event.app_length = 0;
  size_t body;
  if (frame.size() > after_pri + 1 && frame[after_pri] == '1' && frame[after_pri + 1] == ' ')
    body = body_of_rfc5424(frame, after_pri + 2, event);
  else
    body = body_of_rfc3164(frame, after_pri, event);
  event.body_offset = static_cast<uint32_t>(std::min(body, frame.size()));
}

}  // namespace sluice::syslog_tcp
