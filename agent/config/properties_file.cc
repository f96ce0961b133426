#include "agent/config/properties_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sluice::config {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

// Appends the UTF-8 encoding of a \uXXXX escape.
void append_utf8(std::string& out, unsigned code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

std::string unescape(std::string_view text, const SourceLocation& where) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    char c = text[++i];
    switch (c) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        unsigned code = 0;
        if (i + 4 >= text.size())
          throw ConfigError(where.to_string() + ": malformed \\u escape (expected 4 hex digits)");
        for (int d = 1; d <= 4; ++d) {
          char h = text[i + d];
          code <<= 4;
          if (h >= '0' && h <= '9')
            code |= h - '0';
          else if (h >= 'a' && h <= 'f')
            code |= h - 'a' + 10;
          else if (h >= 'A' && h <= 'F')
            code |= h - 'A' + 10;
          else
            throw ConfigError(where.to_string() + ": malformed \\u escape (expected 4 hex digits)");
        }
        append_utf8(out, code);
        i += 4;
        break;
      }
      default: out += c;  // \=, \:, \#, \!, \\ and "\ " stand for themselves
    }
  }
  return out;
}

// True when the line ends in an odd number of backslashes: the next line continues it.
bool continues(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[line.size() - 1 - n] == '\\') ++n;
  return n % 2 == 1;
}

}  // namespace

FlatConfig parse_properties(std::string_view text, const std::string& file) {
  FlatConfig entries;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    // Gather one logical line.
    std::string logical;
    const int first_line = line_no + 1;
    bool first = true;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      size_t lead = 0;
      while (lead < line.size() && is_blank(line[lead])) ++lead;
      line.remove_prefix(lead);
      if (first && (line.empty() || line[0] == '#' || line[0] == '!')) break;
      first = false;
      if (continues(line)) {
        logical.append(line.substr(0, line.size() - 1));
        continue;
      }
      logical.append(line);
      break;
    }
    if (logical.empty()) continue;

    const SourceLocation where{file, first_line};
    size_t i = 0;
    while (i < logical.size()) {
      char c = logical[i];
      if (c == '\\') {
        i += 2;
        continue;
      }
      if (c == '=' || c == ':' || is_blank(c)) break;
      ++i;
    }
    const size_t key_end = std::min(i, logical.size());
    while (i < logical.size() && is_blank(logical[i])) ++i;
    if (i < logical.size() && (logical[i] == '=' || logical[i] == ':')) ++i;
    while (i < logical.size() && is_blank(logical[i])) ++i;
    std::string key = unescape(std::string_view(logical).substr(0, key_end), where);
    std::string value = unescape(std::string_view(logical).substr(i), where);
    while (!value.empty() && is_blank(value.back())) value.pop_back();
    entries.push_back(FlatEntry{std::move(key), std::move(value), where});
  }
  return entries;
}

std::string read_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read the configuration file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace sluice::config
