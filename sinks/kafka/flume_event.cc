#include "sinks/kafka/flume_event.h"

#include <cstdint>

namespace sluice::kafka {
namespace {

// Avro's long: zig-zag, then base-128 varint, low group first.
void put_long(std::string& out, int64_t value) {
  uint64_t n = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  while (n >= 0x80) {
    out += static_cast<char>((n & 0x7F) | 0x80);
    n >>= 7;
  }
  out += static_cast<char>(n);
}

void put_bytes(std::string& out, std::string_view bytes) {
  put_long(out, static_cast<int64_t>(bytes.size()));
  out += bytes;
}

bool get_long(std::string_view& in, int64_t& value) {
  uint64_t n = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) return false;
    const auto byte = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    n |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (!(byte & 0x80)) {
      value = static_cast<int64_t>(n >> 1) ^ -static_cast<int64_t>(n & 1);
      return true;
    }
  }
  return false;
}

bool get_bytes(std::string_view& in, std::string& out) {
  int64_t length = 0;
  if (!get_long(in, length) || length < 0 || static_cast<uint64_t>(length) > in.size()) return false;
  out.assign(in.substr(0, static_cast<size_t>(length)));
  in.remove_prefix(static_cast<size_t>(length));
  return true;
}

}  // namespace

void append_flume_event(const FlumeHeaders& headers, std::string_view body, std::string& out) {
  if (!headers.empty()) {  // a map is blocks of entries, ended by an empty block
    put_long(out, static_cast<int64_t>(headers.size()));
    for (const auto& [name, value] : headers) {
      put_bytes(out, name);
      put_bytes(out, value);
    }
  }
  put_long(out, 0);
  put_bytes(out, body);
}

std::optional<FlumeEvent> parse_flume_event(std::string_view in) {
  FlumeEvent event;
  while (true) {
    int64_t count = 0;
    if (!get_long(in, count)) return std::nullopt;
    if (count == 0) break;
    if (count < 0) {  // a negative count is followed by the block's size in bytes
      int64_t size = 0;
      if (count == INT64_MIN || !get_long(in, size)) return std::nullopt;
      count = -count;
    }
    if (static_cast<uint64_t>(count) > in.size()) return std::nullopt;  // each entry takes two bytes at least
    for (int64_t i = 0; i < count; ++i) {
      auto& [name, value] = event.headers.emplace_back();
      if (!get_bytes(in, name) || !get_bytes(in, value)) return std::nullopt;
    }
  }
  if (!get_bytes(in, event.body) || !in.empty()) return std::nullopt;
  return event;
}

}  // namespace sluice::kafka
