#include "top/prometheus_text.h"

#include <cmath>
#include <cstdlib>
#include <optional>

namespace sluice::top {
namespace {

bool is_name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

// A quoted label value from `in` (after its opening quote), escapes undone; nullopt if unterminated.
std::optional<std::string> quoted(std::string_view& in) {
  std::string value;
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '"') {
      in.remove_prefix(i + 1);
      return value;
    }
    if (c == '\\' && i + 1 < in.size()) {
      const char next = in[++i];
      value += next == 'n' ? '\n' : next;
    } else {
      value += c;
    }
  }
  return std::nullopt;
}

std::optional<double> parse_number(std::string_view text) {
  if (text == "+Inf" || text == "Inf") return HUGE_VAL;
  if (text == "-Inf") return -HUGE_VAL;
  if (text == "NaN") return std::nan("");
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size()) return std::nullopt;
  return value;
}

std::optional<Sample> parse_line(std::string_view line) {
  Sample s;
  size_t i = 0;
  while (i < line.size() && is_name_char(line[i], i == 0)) ++i;
  if (i == 0) return std::nullopt;
  s.name = std::string(line.substr(0, i));
  line.remove_prefix(i);
  if (!line.empty() && line.front() == '{') {
    line.remove_prefix(1);
    while (true) {
      while (!line.empty() && (line.front() == ' ' || line.front() == ',')) line.remove_prefix(1);
      if (line.empty()) return std::nullopt;
      if (line.front() == '}') {
        line.remove_prefix(1);
        break;
      }
      const size_t eq = line.find('=');
      if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') return std::nullopt;
      const std::string key(line.substr(0, eq));
      line.remove_prefix(eq + 2);
      std::optional<std::string> value = quoted(line);
      if (!value) return std::nullopt;
      s.labels[key] = std::move(*value);
    }
  }
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  const size_t end = line.find(' ');  // an optional timestamp follows
  const std::optional<double> value = parse_number(line.substr(0, end));
  if (!value) return std::nullopt;
  s.value = *value;
  return s;
}

}  // namespace

const std::string& Sample::label(const std::string& key) const {
  static const std::string none;
  const auto it = labels.find(key);
  return it == labels.end() ? none : it->second;
}

std::vector<Sample> parse_prometheus_text(std::string_view text) {
  std::vector<Sample> samples;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    if (std::optional<Sample> s = parse_line(line)) samples.push_back(std::move(*s));
  }
  return samples;
}

}  // namespace sluice::top
