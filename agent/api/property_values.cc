#include "agent/api/property_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace sluice::config {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// Splits "16m" into 16 and "m"; false when there is no leading integer.
bool split_number(std::string_view text, int64_t& number, std::string& suffix) {
  text = trim(text);
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc() || ptr == text.data()) return false;
  suffix = lower(trim(std::string_view(ptr, end - ptr)));
  return true;
}

void check_limits(int64_t value, std::string_view text, const ValueContext& ctx, const Limits& limits,
                  std::string_view what) {
  if (value < limits.min || value > limits.max) ctx.fail(text, std::string(what) + " in " + limits_text(limits));
}

}  // namespace

void ValueContext::fail(std::string_view value, std::string_view expected) const {
  throw ConfigError(where.to_string() + ": " + key + ": \"" + std::string(value) + "\" is not " +
                    std::string(expected));
}

std::string limits_text(const Limits& limits) {
  auto bound = [](int64_t v, bool low) -> std::string {
    if (low && v == std::numeric_limits<int64_t>::min()) return "-inf";
    if (!low && v == std::numeric_limits<int64_t>::max()) return "inf";
    return std::to_string(v);
  };
  return "[" + bound(limits.min, true) + ", " + bound(limits.max, false) + "]";
}

int64_t parse_integer(std::string_view text, const ValueContext& ctx, Limits limits) {
  int64_t value = 0;
  std::string suffix;
  if (!split_number(text, value, suffix) || !suffix.empty()) ctx.fail(text, "an integer in " + limits_text(limits));
  check_limits(value, text, ctx, limits, "an integer");
  return value;
}

ByteSize parse_byte_size(std::string_view text, const ValueContext& ctx, Limits limits) {
  int64_t value = 0;
  std::string suffix;
  const std::string expected = "a size in bytes (e.g. 16777216, 32k, 16m, 1g) in " + limits_text(limits);
  if (!split_number(text, value, suffix) || value < 0) ctx.fail(text, expected);
  int shift = 0;
  if (suffix.empty() || suffix == "b")
    shift = 0;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib")
    shift = 10;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib")
    shift = 20;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib")
    shift = 30;
  else
    ctx.fail(text, expected);
  if (shift && value > (std::numeric_limits<int64_t>::max() >> shift)) ctx.fail(text, expected);
  value <<= shift;
  check_limits(value, text, ctx, limits, "a size");
  return ByteSize{static_cast<uint64_t>(value)};
}

bool parse_boolean(std::string_view text, const ValueContext& ctx) {
  const std::string v = lower(trim(text));
  if (v == "true" || v == "yes" || v == "on" || v == "1") return true;
  if (v == "false" || v == "no" || v == "off" || v == "0") return false;
  ctx.fail(text, "a boolean (true or false)");
}

std::chrono::milliseconds parse_duration(std::string_view text, const ValueContext& ctx, Limits limits_ms) {
  int64_t value = 0;
  std::string suffix;
  const std::string expected =
      "a duration (e.g. 500, 500ms, 2s, 1m; plain numbers are milliseconds) in " + limits_text(limits_ms) + " ms";
  if (!split_number(text, value, suffix)) ctx.fail(text, expected);
  int64_t scale = 1;
  if (suffix.empty() || suffix == "ms")
    scale = 1;
  else if (suffix == "s")
    scale = 1000;
  else if (suffix == "m" || suffix == "min")
    scale = 60'000;
  else
    ctx.fail(text, expected);
  if (value > std::numeric_limits<int64_t>::max() / scale) ctx.fail(text, expected);
  value *= scale;
  if (value < limits_ms.min || value > limits_ms.max) ctx.fail(text, expected);
  return std::chrono::milliseconds(value);
}

std::vector<std::string> parse_word_list(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  auto separator = [](char c) { return c == ' ' || c == '\t' || c == ','; };
  while (i < text.size()) {
    while (i < text.size() && separator(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !separator(text[i])) ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

}  // namespace sluice::config
