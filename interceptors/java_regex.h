#pragma once
// Regular expressions as Flume's users write them for Java's java.util.regex, run by PCRE2 with
// its JIT: compiled once, when the configuration is read, and matched without allocating. PCRE2
// reads Java's syntax for what interceptors use (classes, \d \w \s, groups, named groups (?<n>),
// alternation, anchors, greedy/lazy/possessive quantifiers, lookaround, (?i) flags); what Java
// has and PCRE2 lacks (e.g. \p{javaLowerCase}) is refused at --check with PCRE2's message.
// Why PCRE2 rather than RE2: Java's regexes have lookaround and backreferences, which RE2 refuses
// by design; PCRE2's JIT matches a 120-byte line in about as long as RE2 (bench/README).

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct pcre2_real_code_8;
struct pcre2_real_match_data_8;

namespace sluice::interceptors {

// A match that could not be decided (the match limit on a hostile line, out of memory): not the
// same as no match; the interceptor keeps the event as it is and says so.
struct MatchFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class JavaRegex {
 public:
  // Throws std::invalid_argument with PCRE2's message and the offset.
  explicit JavaRegex(std::string_view pattern);
  ~JavaRegex();
  JavaRegex(const JavaRegex&) = delete;
  JavaRegex& operator=(const JavaRegex&) = delete;

  const std::string& pattern() const { return pattern_; }
  size_t groups() const { return groups_; }

  // Matcher.find(): somewhere in `subject`. `groups` (if given) gets group 0..groups(); a group
  // that did not take part is {nullptr, 0} (Java's null).
  bool find(std::string_view subject, std::vector<std::string_view>* groups = nullptr) const;
  // Matcher.matches(): the whole of `subject`.
  bool matches(std::string_view subject) const;
  // Matcher.replaceAll(replacement): `replacement` in Java's syntax ($1, ${name}, \$ for a dollar;
  // a group that took no part is empty, as in Java). find, matches and replace_all throw
  // MatchFailed when the match cannot be decided.
  std::string replace_all(std::string_view subject, const std::string& java_replacement) const;
  // Checks a Java replacement string against this pattern (at --check).
  void check_replacement(const std::string& java_replacement) const;

  // Splits `text` at every match (String.split(regex): trailing empty strings dropped).
  std::vector<std::string> split(std::string_view text) const;

 private:
  pcre2_real_match_data_8* match_data() const;  // this thread's, for this pattern

  std::string pattern_;
  pcre2_real_code_8* code_ = nullptr;
  size_t groups_ = 0;
};

}  // namespace sluice::interceptors
