#pragma once
// What a source does with the bytes of each frame before parsing (Flume's charset.default and
// charset.port.<port>): Kafka consumers, and the json format, need valid UTF-8.
//  - utf8: valid UTF-8 passes untouched (checked 8 bytes at a time while it is ASCII); each
//    invalid sequence becomes U+FFFD and the event is counted (events_invalid_utf8);
//  - latin1: ISO-8859-1, converted to UTF-8 (every byte is a character: nothing is invalid);
//  - bytes: passed as received, unchecked (the cheapest; json escapes what is not UTF-8).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::syslog {

enum class Charset : uint8_t { utf8, latin1, bytes };

inline constexpr const char* kCharset = "a supported charset (UTF-8, ISO-8859-1, none)";

// "UTF-8", "ISO-8859-1" and common spellings (any case); "none"/"binary" for bytes.
std::optional<Charset> charset_from_name(std::string_view name);

bool is_valid_utf8(std::string_view text);

// Whether `frame` must be rewritten to be valid UTF-8 under `charset`.
bool needs_conversion(Charset charset, std::string_view frame);

// Writes `frame` as UTF-8 into `out` (replacing its content). Returns how many invalid
// sequences were replaced by U+FFFD (utf8 only).
size_t convert_to_utf8(Charset charset, std::string_view frame, std::string& out);

}  // namespace sluice::syslog
