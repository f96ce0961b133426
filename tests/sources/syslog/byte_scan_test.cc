// The framer's line-end scan (16 bytes a step where SSE2 is there) against a byte-at-a-time
// reading of the same rule: the first LF or NUL, and whether every byte before it is ASCII.
// Positions are chosen to fall either side of each 16-byte step.

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sources/syslog/byte_scan.h"

using namespace sluice::syslog;

namespace {

struct LineEnd {
  size_t end;
  bool ascii;
  bool operator==(const LineEnd&) const = default;
};

LineEnd plain_line_end(std::string_view s, size_t pos) {
  bool ascii = true;
  size_t i = pos;
  for (; i < s.size() && s[i] != '\n' && s[i] != '\0'; ++i)
    if (static_cast<unsigned char>(s[i]) >= 0x80) ascii = false;
  return {i, ascii};
}

// The scan's answer, `ascii` holding `ascii_before` when it is called: the wrong answer, in the
// sweep, so that a scan that leaves it unwritten fails.
LineEnd scanned(std::string_view s, size_t pos, bool ascii_before = false) {
  bool ascii = ascii_before;
  const size_t end = find_line_end(s, pos, ascii);
  return {end, ascii};
}

// Every layout of one terminator (LF, NUL or none), a second one some bytes after it (none, or an
// LF 1 or 17 bytes on: the first must be found), and one high byte (before it, after it, or
// none) in lines of 0-100 bytes read from offsets 0-3. Each line is in a buffer of exactly its
// size, so that a read past its end is one ASan sees (a std::string's terminating NUL would hide
// it, and would even read as a line end).
void check_against_plain() {
  for (const char terminator : {'\n', '\0', 'x'})
    for (size_t length = 0; length <= 100; ++length) {
      const auto buffer = std::make_unique<char[]>(length);
      const std::string_view s(buffer.get(), length);
      std::vector<size_t> high_positions;  // length: none
      for (size_t at = 0; at < length; at += (at < 70 ? 3 : 11)) high_positions.push_back(at);
      high_positions.push_back(length);
      // Without a terminator, where it would have been makes no difference: one layout.
      for (size_t end_at = terminator == 'x' ? length : 0; end_at <= length; end_at += (end_at < 70 ? 1 : 7))
        for (const size_t second : {size_t{0}, size_t{1}, size_t{17}})
          for (const size_t high_at : high_positions)
            for (size_t pos = 0; pos <= 3 && pos <= length; ++pos) {
              if (second && (terminator == 'x' || end_at + second >= length)) continue;
              std::fill_n(buffer.get(), length, 'a');
              if (end_at < length) buffer[end_at] = terminator;
              if (second) buffer[end_at + second] = '\n';
              if (high_at < length && high_at != end_at && high_at != end_at + second) buffer[high_at] = '\xC3';
              const LineEnd expected = plain_line_end(s, pos), found = scanned(s, pos, !expected.ascii);
              if (found == expected) continue;  // over two million layouts: only a difference is reported
              FAIL("length " << length << ", terminator at " << end_at << " and " << second << " on, high byte at "
                             << high_at << ", from " << pos << ": found " << found.end
                             << (found.ascii ? " (ASCII)" : "") << ", expected " << expected.end
                             << (expected.ascii ? " (ASCII)" : ""));
            }
    }
}

}  // namespace

TEST_CASE("the line-end scan finds what a byte-at-a-time reading finds", "[byte_scan]") {
  check_against_plain();
  // A terminator at a step's first byte after a high byte in the step before, and the all-ASCII
  // tail after it.
  std::string s(15, 'a');
  s += '\xC3';
  s += '\n';
  s.append(40, 'b');
  const LineEnd after_high = scanned(s, 0), in_tail = scanned(s, 17);
  CHECK(after_high.end == 16);
  CHECK_FALSE(after_high.ascii);
  CHECK(in_tail.end == s.size());
  CHECK(in_tail.ascii);
}
