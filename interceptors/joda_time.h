#pragma once
// Times in the patterns of Joda-Time's DateTimeFormat, which Flume's regex_extractor millis
// serializer takes (`serializers.s1.pattern = yyyy-MM-dd HH:mm:ss`): the letters y M d H h a m s
// S Z (MMM and MMMM: English month names), literal characters and 'quoted text'. A time without
// an offset (no Z) is the agent's local time, as Joda's default zone is the JVM's.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::interceptors {

class JodaPattern {
 public:
  // Throws std::invalid_argument for a letter it does not know.
  explicit JodaPattern(std::string_view pattern);
  // Milliseconds since the epoch, or nullopt if `text` is not (wholly) in the pattern.
  std::optional<int64_t> parse_millis(std::string_view text) const;

 private:
  struct Field {
    char letter = 0;  // 0: literal
    int width = 0;
    std::string literal;
  };
  std::vector<Field> fields_;
};

}  // namespace sluice::interceptors
