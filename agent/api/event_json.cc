#include "agent/api/event_json.h"

#include <charconv>

#include "agent/api/utf8.h"

namespace sluice {
namespace {

void append_number(std::string& out, int64_t value) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, ec == std::errc() ? end : digits);
}

// A JSON string: quotes, backslashes and control characters escaped; invalid UTF-8 as U+FFFD.
void append_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // start of the bytes that need no escaping, appended in one go
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      // Only a well-formed sequence is copied; anything else becomes U+FFFD.
      if (const size_t length = utf8_sequence_length(text, i)) {
        i += length;
        continue;
      }
    }
    out.append(text.data() + run, i - run);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += "\xEF\xBF\xBD";
        }
    }
    run = ++i;
  }
  out.append(text.data() + run, text.size() - run);
  out += '"';
}

void append_key(std::string& out, std::string_view key) {
  out += ',';
  append_string(out, key);
  out += ':';
}

void append_text_field(std::string& out, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  append_key(out, key);
  append_string(out, value);
}

}  // namespace

void append_event_json(const EventBatch& batch, const EventRecord& e, std::string& out) {
  out += "{\"timestamp\":";
  append_number(out, e.timestamp_ms);
  append_key(out, "Facility");
  append_number(out, e.facility);
  append_key(out, "Severity");
  append_number(out, e.severity);
  if (e.status != EventStatus::ok)
    append_text_field(out, "flume.syslog.status", e.status == EventStatus::invalid ? "Invalid" : "Incomplete");
  if (e.version) {
    append_key(out, "version");
    append_number(out, e.version);
  }
  append_text_field(out, "host", batch.text(e, e.host));
  append_text_field(out, "app", batch.text(e, e.app));
  append_text_field(out, "procid", batch.text(e, e.procid));
  append_text_field(out, "msgid", batch.text(e, e.msgid));
  append_text_field(out, "structured_data", batch.text(e, e.structured_data));
  if (const HeaderNames* names = batch.header_names()) {
    if (!names->port.empty()) {
      append_key(out, names->port);
      append_number(out, e.port);
    }
    if (!names->client_ip.empty()) append_text_field(out, names->client_ip, batch.client_ip(e));
    if (!names->client_host.empty()) append_text_field(out, names->client_host, batch.client_host(e));
  }
  append_key(out, "message");
  append_string(out, batch.message(e));
  out += '}';
}

}  // namespace sluice
