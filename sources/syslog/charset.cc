#include "sources/syslog/charset.h"

#include <cctype>
#include <cstring>

#include "agent/api/utf8.h"

namespace sluice::syslog {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Whether every byte is below 0x80: one OR over the whole text, which the compiler
// vectorises; the common case of a syslog line costs a few nanoseconds.
bool is_ascii(std::string_view s) {
  uint64_t any = 0;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    any |= word;
  }
  uint8_t tail = 0;
  for (; i < s.size(); ++i) tail |= static_cast<uint8_t>(s[i]);
  return ((any & 0x8080808080808080ULL) | (tail & 0x80)) == 0;
}

}  // namespace

std::optional<Charset> charset_from_name(std::string_view name) {
  std::string lower;
  for (char c : name)
    if (c != '-' && c != '_') lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "utf8") return Charset::utf8;
  if (lower == "iso88591" || lower == "latin1" || lower == "l1") return Charset::latin1;
  if (lower == "none" || lower == "binary" || lower == "bytes") return Charset::bytes;
  return std::nullopt;
}

bool is_valid_utf8(std::string_view s) {
  if (is_ascii(s)) return true;
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = utf8_sequence_length(s, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

bool needs_conversion(Charset charset, std::string_view frame) {
  switch (charset) {
    case Charset::utf8: return !is_valid_utf8(frame);
    case Charset::latin1: return !is_ascii(frame);
    case Charset::bytes: return false;
  }
  return false;
}

size_t convert_to_utf8(Charset charset, std::string_view frame, std::string& out) {
  out.clear();
  size_t replaced = 0;
  if (charset == Charset::latin1) {
    for (char c : frame) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x80) {
        out += c;
      } else {
        out += static_cast<char>(0xC0 | (byte >> 6));
        out += static_cast<char>(0x80 | (byte & 0x3F));
      }
    }
    return 0;
  }
  if (charset == Charset::bytes) {
    out.assign(frame);
    return 0;
  }
  for (size_t i = 0; i < frame.size();) {
    const size_t length = utf8_sequence_length(frame, i);
    if (length == 0) {
      out += kReplacement;
      ++replaced;
      ++i;
    } else {
      out.append(frame.data() + i, length);
      i += length;
    }
  }
  return replaced;
}

}  // namespace sluice::syslog
