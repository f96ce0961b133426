#include "agent/api/event_json.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "agent/api/utf8.h"

namespace sluice {
namespace {

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

// The headers interceptors set on an event (not those they removed), each once with its last
// value, in the order first set.
void append_set_headers(std::string& out, std::string_view block) {
  HeaderReader reader(block);
  std::vector<std::string_view> done;
  for (HeaderEntry entry; reader.next(entry);) {
    if (std::find(done.begin(), done.end(), entry.name) != done.end()) continue;
    done.push_back(entry.name);
    const HeaderEntry last = *last_entry(block, entry.name);
    if (last.removed) continue;
    append_key(out, entry.name);
    append_string(out, last.value);
  }
}

}  // namespace

void append_event_json(const EventBatch& batch, const EventRecord& e, std::string& out) {
  out += '{';
  const size_t opened = out.size();
  // The fields of the JSON format (a field an interceptor set or removed is left to its block),
  // then what interceptors set, then the message.
  const EventHeaders headers = batch.headers(e);
  headers.for_each_field(in_json, [&](std::string_view name, std::string_view value, bool number) {
    append_key(out, name);
    if (number)
      out += value;
    else
      append_string(out, value);
  });
  append_set_headers(out, headers.block());
  append_key(out, "message");
  append_string(out, batch.body_rewritten(e) ? batch.body(e) : batch.message(e));
  out.erase(opened, 1);  // the first key's comma
  out += '}';
}

}  // namespace sluice
