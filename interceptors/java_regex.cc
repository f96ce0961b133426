#define PCRE2_CODE_UNIT_WIDTH 8
#include "interceptors/java_regex.h"

#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace sluice::interceptors {

constexpr uint32_t kGroupsMax = 99;

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

// Java's replacement syntax into PCRE2's: `\x` is a literal x, `$` starts a group reference
// ($n or ${name}); in PCRE2's, a literal `$` is `$$` and `\` is literal.
std::string pcre2_replacement(const std::string& java) {
  std::string out;
  for (size_t i = 0; i < java.size(); ++i) {
    const char c = java[i];
    if (c == '\\') {
      if (i + 1 >= java.size()) throw std::invalid_argument("a replacement may not end with '\\'");
      const char next = java[++i];
      out += next == '$' ? std::string("$$") : std::string(1, next);
    } else if (c == '$') {
      if (i + 1 >= java.size()) throw std::invalid_argument("a '$' at the end of the replacement names no group");
      out += '$';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

JavaRegex::JavaRegex(std::string_view pattern) : pattern_(pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern_.data()), pattern_.size(),
                        PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
  if (!code_)
    throw std::invalid_argument("not a regular expression: " + pcre2_message(error) + " at offset " +
                                std::to_string(offset));
  pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);  // without the JIT (a platform without it) it still matches
  uint32_t count = 0;
  pcre2_pattern_info(code_, PCRE2_INFO_CAPTURECOUNT, &count);
  groups_ = count;
  if (count > kGroupsMax) {
    pcre2_code_free(code_);
    code_ = nullptr;
    throw std::invalid_argument("more than " + std::to_string(kGroupsMax) + " groups");
  }
}

JavaRegex::~JavaRegex() { pcre2_code_free(code_); }

// A bound on one match's work, so that a pattern that backtracks badly on a hostile line costs a
// few milliseconds, not seconds of an io thread: past it the match fails with MatchFailed
// instead of running on (PCRE2's default is ten million steps). The JIT's stack, 32 KiB by
// default, may grow to 1 MiB. One per thread.
constexpr uint32_t kMatchLimit = 1'000'000;

static pcre2_match_context* match_context() {
  struct PerThread {
    pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, nullptr);
    pcre2_match_context* context = [this] {
      pcre2_match_context* c = pcre2_match_context_create(nullptr);
      pcre2_set_match_limit(c, kMatchLimit);
      pcre2_set_depth_limit(c, kMatchLimit / 10);
      if (stack) pcre2_jit_stack_assign(c, nullptr, stack);
      return c;
    }();
    ~PerThread() {
      pcre2_match_context_free(context);
      pcre2_jit_stack_free(stack);
    }
  };
  thread_local PerThread mine;
  return mine.context;
}

// Beyond "no match", why a match could not be decided.
static void throw_if_failed(int rc) {
  if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) throw MatchFailed(pcre2_message(rc));
}

// One per thread, shared by every pattern (a match never allocates), large enough for any
// pattern's groups up to kGroupsMax; freed with the thread.
pcre2_match_data* JavaRegex::match_data() const {
  struct PerThread {
    pcre2_match_data* data = pcre2_match_data_create(kGroupsMax + 1, nullptr);
    ~PerThread() { pcre2_match_data_free(data); }
  };
  thread_local PerThread mine;
  return mine.data;
}

bool JavaRegex::find(std::string_view subject, std::vector<std::string_view>* groups) const {
  pcre2_match_data* data = match_data();
  const int rc =
      pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0, 0, data, match_context());
  throw_if_failed(rc);
  if (rc < 0) return false;
  if (groups) {
    groups->clear();
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    for (size_t i = 0; i <= groups_; ++i) {
      if (static_cast<int>(i) >= rc || ovector[2 * i] == PCRE2_UNSET)
        groups->emplace_back();
      else
        groups->emplace_back(subject.data() + ovector[2 * i], ovector[2 * i + 1] - ovector[2 * i]);
    }
  }
  return true;
}

bool JavaRegex::matches(std::string_view subject) const {
  const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0,
                             PCRE2_ANCHORED | PCRE2_ENDANCHORED, match_data(), match_context());
  throw_if_failed(rc);
  return rc >= 0;
}

std::string JavaRegex::replace_all(std::string_view subject, const std::string& java_replacement) const {
  const std::string replacement = pcre2_replacement(java_replacement);
  std::string out(subject.size() + 64, '\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    PCRE2_SIZE length = out.size();
    const int rc =
        pcre2_substitute(code_, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0,
                         PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH | PCRE2_SUBSTITUTE_UNSET_EMPTY,
                         match_data(), match_context(), reinterpret_cast<PCRE2_SPTR>(replacement.data()),
                         replacement.size(), reinterpret_cast<PCRE2_UCHAR*>(out.data()), &length);
    if (rc >= 0) {
      out.resize(length);
      return out;
    }
    if (rc != PCRE2_ERROR_NOMEMORY) throw MatchFailed("replacement: " + pcre2_message(rc));
    out.assign(length, '\0');  // told the length it needs
  }
  throw std::invalid_argument("replacement: output did not fit");
}

void JavaRegex::check_replacement(const std::string& java_replacement) const {
  // Each group reference must name a group of the pattern (PCRE2 would say so only at a match).
  const std::string replacement = pcre2_replacement(java_replacement);
  for (size_t i = 0; i + 1 < replacement.size(); ++i) {
    if (replacement[i] != '$') continue;
    if (replacement[i + 1] == '$') {
      ++i;
      continue;
    }
    size_t j = i + 1;
    std::string name;
    if (replacement[j] == '{') {
      const size_t close = replacement.find('}', j);
      if (close == std::string::npos) throw std::invalid_argument("replacement: '${' without '}'");
      name = replacement.substr(j + 1, close - j - 1);
    } else {
      while (j < replacement.size() && std::isdigit(static_cast<unsigned char>(replacement[j])))
        name += replacement[j++];
      if (name.empty()) throw std::invalid_argument("replacement: '$' must be followed by a group number or {name}");
    }
    const bool number = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    if (number ? std::stoul(name) > groups_
               : pcre2_substring_number_from_name(code_, reinterpret_cast<PCRE2_SPTR>(name.c_str())) < 0)
      throw std::invalid_argument("replacement: the pattern has no group " + name);
  }
}

std::vector<std::string> JavaRegex::split(std::string_view text) const {
  std::vector<std::string> parts;
  pcre2_match_data* data = match_data();
  size_t start = 0, from = 0;
  while (from <= text.size()) {
    const int rc =
        pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), from, 0, data, match_context());
    if (rc < 0) break;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    if (ovector[1] == ovector[0]) {  // an empty match: step over one character
      from = ovector[0] + 1;
      continue;
    }
    parts.emplace_back(text.substr(start, ovector[0] - start));
    start = from = ovector[1];
  }
  parts.emplace_back(text.substr(start));
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  return parts;
}

}  // namespace sluice::interceptors
