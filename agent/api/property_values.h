#pragma once
// Parsers for property values. Each names the full key, the value and what was expected
// when it refuses one, in one line: `tier2.channels.c1.capacity: "10x" is not an integer`.

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "agent/api/config_error.h"

namespace sluice::config {

// A size in bytes; accepts plain integers and binary suffixes: 32k, 16m, 1g (also kb/KiB...).
struct ByteSize {
  uint64_t bytes = 0;
  friend bool operator==(ByteSize, ByteSize) = default;
};

struct Limits {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
};

// The context every parser reports errors with.
struct ValueContext {
  std::string key;  // full key: tier2.channels.c1.capacity
  SourceLocation where;
  [[noreturn]] void fail(std::string_view value, std::string_view expected) const;
};

int64_t parse_integer(std::string_view text, const ValueContext& ctx, Limits limits);
ByteSize parse_byte_size(std::string_view text, const ValueContext& ctx, Limits limits);
bool parse_boolean(std::string_view text, const ValueContext& ctx);
// "500" (ms), "500ms", "2s", "1m".
std::chrono::milliseconds parse_duration(std::string_view text, const ValueContext& ctx, Limits limits_ms);
// Whitespace- or comma-separated words.
std::vector<std::string> parse_word_list(std::string_view text);

std::string limits_text(const Limits& limits);

}  // namespace sluice::config
