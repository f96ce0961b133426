#include "interceptors/joda_time.h"

#include <cctype>
#include <cerrno>
#include <ctime>
#include <stdexcept>

namespace sluice::interceptors {
namespace {

constexpr const char* kMonths[] = {"january", "february", "march",     "april",   "may",      "june",
                                   "july",    "august",   "september", "october", "november", "december"};

bool parse_number(std::string_view text, size_t& at, int min_digits, int max_digits, int& value) {
  int digits = 0;
  value = 0;
  while (at < text.size() && digits < max_digits && std::isdigit(static_cast<unsigned char>(text[at]))) {
    value = value * 10 + (text[at++] - '0');
    ++digits;
  }
  return digits >= min_digits;
}

bool parse_month_name(std::string_view text, size_t& at, bool full, int& month) {
  for (int m = 0; m < 12; ++m) {
    const std::string_view name(kMonths[m]);
    const size_t length = full ? name.size() : 3;
    if (text.size() - at < length) continue;
    bool same = true;
    for (size_t i = 0; i < length && same; ++i)
      same = std::tolower(static_cast<unsigned char>(text[at + i])) == name[i];
    if (same) {
      at += length;
      month = m + 1;
      return true;
    }
  }
  return false;
}

}  // namespace

JodaPattern::JodaPattern(std::string_view pattern) {
  for (size_t i = 0; i < pattern.size();) {
    const char c = pattern[i];
    if (c == '\'') {  // quoted text; '' is a quote
      std::string literal;
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '\'') {
        literal = "'";
        j += 1;
      } else {
        while (j < pattern.size() && pattern[j] != '\'') literal += pattern[j++];
        if (j >= pattern.size()) throw std::invalid_argument("a quote in the pattern is not closed");
        ++j;
      }
      fields_.push_back({0, 0, literal});
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < pattern.size() && pattern[j] == c) ++j;
      if (std::string_view("yMdHhamsSZ").find(c) == std::string_view::npos)
        throw std::invalid_argument(std::string("the pattern letter '") + c +
                                    "' is not supported (y M d H h a m s S Z are)");
      // A number is read into an int: more than 9 digits would overflow it (no time has them).
      if (std::string_view("ydHhmsS").find(c) != std::string_view::npos && j - i > 9)
        throw std::invalid_argument(std::string("'") + c + "' is written " + std::to_string(j - i) +
                                    " times: a number field has at most 9 letters");
      fields_.push_back({c, static_cast<int>(j - i), {}});
      i = j;
    } else {
      fields_.push_back({0, 0, std::string(1, c)});
      ++i;
    }
  }
}

std::optional<int64_t> JodaPattern::parse_millis(std::string_view text) const {
  int year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, millis = 0;
  bool pm = false, half_day = false, has_offset = false;
  int offset_minutes = 0;
  size_t at = 0;
  for (size_t f = 0; f < fields_.size(); ++f) {
    const Field& field = fields_[f];
    // A number directly followed by another field takes exactly its width (yyyyMMdd).
    const bool adjacent = f + 1 < fields_.size() && fields_[f + 1].letter != 0;
    const int max = adjacent ? field.width : 9;
    int value = 0;
    switch (field.letter) {
      case 0:
        if (text.substr(at, field.literal.size()) != field.literal) return std::nullopt;
        at += field.literal.size();
        break;
      case 'y':
        // Four digits unless the pattern writes more (Joda's years go further; no log line's do).
        if (!parse_number(text, at, field.width == 2 ? 2 : 1, field.width == 2 ? 2 : std::max(field.width, 4), value))
          return std::nullopt;
        year = field.width == 2 ? 2000 + value : value;  // Joda's yy pivot: 2000-2099 for two digits
        break;
      case 'M':
        if (field.width >= 3) {
          if (!parse_month_name(text, at, field.width >= 4, month)) return std::nullopt;
        } else if (!parse_number(text, at, 1, std::max(max, 2), month)) {
          return std::nullopt;
        }
        break;
      case 'd':
        if (!parse_number(text, at, 1, std::max(max, 2), day)) return std::nullopt;
        break;
      case 'H':
        if (!parse_number(text, at, 1, std::max(max, 2), hour)) return std::nullopt;
        break;
      case 'h':
        if (!parse_number(text, at, 1, std::max(max, 2), hour)) return std::nullopt;
        half_day = true;
        break;
      case 'a': {
        const std::string_view rest = text.substr(at, 2);
        if (rest.size() < 2) return std::nullopt;
        const char first = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[0])));
        if ((first != 'A' && first != 'P') || std::toupper(static_cast<unsigned char>(rest[1])) != 'M')
          return std::nullopt;
        pm = first == 'P';
        at += 2;
        break;
      }
      case 'm':
        if (!parse_number(text, at, 1, std::max(max, 2), minute)) return std::nullopt;
        break;
      case 's':
        if (!parse_number(text, at, 1, std::max(max, 2), second)) return std::nullopt;
        break;
      case 'S': {
        const size_t start = at;
        if (!parse_number(text, at, 1, max, value)) return std::nullopt;
        // A fraction of a second: its digits scaled to milliseconds.
        size_t digits = at - start;
        while (digits < 3) {
          value *= 10;
          ++digits;
        }
        while (digits > 3) {
          value /= 10;
          --digits;
        }
        millis = value;
        break;
      }
      case 'Z': {
        if (at < text.size() && text[at] == 'Z') {  // UTC as Joda prints it
          ++at;
          has_offset = true;
          break;
        }
        if (at >= text.size() || (text[at] != '+' && text[at] != '-')) return std::nullopt;
        const int sign = text[at++] == '-' ? -1 : 1;
        int hours = 0, minutes = 0;
        if (!parse_number(text, at, 2, 2, hours)) return std::nullopt;
        if (at < text.size() && text[at] == ':') ++at;
        if (!parse_number(text, at, 2, 2, minutes)) return std::nullopt;
        offset_minutes = sign * (hours * 60 + minutes);
        has_offset = true;
        break;
      }
    }
  }
  if (at != text.size()) return std::nullopt;
  if (half_day) {
    if (hour < 1 || hour > 12) return std::nullopt;
    hour = hour % 12 + (pm ? 12 : 0);
  }
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1] || (month == 2 && day == 29 && !leap) || hour > 23 ||
      minute > 59 || second > 59)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  int64_t seconds;
  if (has_offset) {
    seconds = static_cast<int64_t>(timegm(&tm)) - int64_t{offset_minutes} * 60;
  } else {
    tm.tm_isdst = -1;  // the local zone decides
    errno = 0;
    const time_t local = mktime(&tm);
    if (local == -1 && errno != 0) return std::nullopt;
    seconds = static_cast<int64_t>(local);
  }
  return seconds * 1000 + millis;
}

}  // namespace sluice::interceptors
