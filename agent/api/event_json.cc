#include "agent/api/event_json.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

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

// The headers interceptors set (or removed) on an event: the names its parsed fields give way to.
class SetHeaders {
 public:
  explicit SetHeaders(std::string_view block) : block_(block) {}
  bool mentions(std::string_view name) const { return !block_.empty() && last_entry(block_, name); }
  // Each set header once, its last value, in the order first set; removed ones left out.
  void append(std::string& out) const {
    HeaderReader reader(block_);
    std::vector<std::string_view> done;
    for (HeaderEntry entry; reader.next(entry);) {
      if (std::find(done.begin(), done.end(), entry.name) != done.end()) continue;
      done.push_back(entry.name);
      const HeaderEntry last = *last_entry(block_, entry.name);
      if (last.removed) continue;
      append_key(out, entry.name);
      append_string(out, last.value);
    }
  }

 private:
  std::string_view block_;
};

}  // namespace

void append_event_json(const EventBatch& batch, const EventRecord& e, std::string& out) {
  // A parsed field an interceptor set or removed is written as the interceptor left it, below.
  const SetHeaders set(batch.header_block(e));
  auto number = [&](std::string_view key, int64_t value) {
    if (set.mentions(key)) return;
    append_key(out, key);
    append_number(out, value);
  };
  auto text = [&](std::string_view key, std::string_view value) {
    if (!set.mentions(key)) append_text_field(out, key, value);
  };
  out += '{';
  const size_t opened = out.size();
  number("timestamp", e.timestamp_ms);
  number("Facility", e.facility);
  number("Severity", e.severity);
  if (e.status != EventStatus::ok)
    text("flume.syslog.status", e.status == EventStatus::invalid ? "Invalid" : "Incomplete");
  if (e.version) number("version", e.version);
  text("host", batch.text(e, e.host));
  text("app", batch.text(e, e.app));
  text("procid", batch.text(e, e.procid));
  text("msgid", batch.text(e, e.msgid));
  text("structured_data", batch.text(e, e.structured_data));
  if (const HeaderNames* names = batch.header_names()) {
    if (!names->port.empty()) number(names->port, e.port);
    if (!names->client_ip.empty()) text(names->client_ip, batch.client_ip(e));
    if (!names->client_host.empty()) text(names->client_host, batch.client_host(e));
  }
  set.append(out);
  append_key(out, "message");
  append_string(out, batch.body_rewritten(e) ? batch.body(e) : batch.message(e));
  out.erase(opened, 1);  // the first key's comma
  out += '}';
}

}  // namespace sluice
