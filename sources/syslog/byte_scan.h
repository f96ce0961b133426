#pragma once
// Finding the next of two bytes, 16 at a time where SSE2 is there (all x86-64): the framer's
// LF-or-NUL and the STRUCTURED-DATA scanner's quote-or-bracket are both on the per-event path.
// The framer's scan also gathers the high bits of what it passed: a line it finds all ASCII needs
// no UTF-8 check of its own.

#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sluice::syslog {

// The position of the first byte equal to a or b at or after pos, or s.size().
inline size_t find_either(std::string_view s, size_t pos, char a, char b) {
  size_t i = pos;
#if defined(__SSE2__)
  const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b);
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const int mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, va), _mm_cmpeq_epi8(chunk, vb)));
    if (mask) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  for (; i < s.size(); ++i)
    if (s[i] == a || s[i] == b) return i;
  return s.size();
}

// The position of the first LF or NUL at or after pos (or s.size()), and whether every byte from
// pos to there is below 0x80: one more instruction per 16 bytes than find_either.
inline size_t find_line_end(std::string_view s, size_t pos, bool& ascii) {
  size_t i = pos;
  unsigned high = 0;  // the high bits of the bytes passed
#if defined(__SSE2__)
  const __m128i lf = _mm_set1_epi8('\n'), nul = _mm_setzero_si128();
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const auto ends =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, lf), _mm_cmpeq_epi8(chunk, nul))));
    const auto tops = static_cast<unsigned>(_mm_movemask_epi8(chunk));
    if (ends) {
      const unsigned at = static_cast<unsigned>(__builtin_ctz(ends));
      high |= tops & ((1u << at) - 1);  // only the bytes before the end
      ascii = high == 0;
      return i + at;
    }
    high |= tops;
  }
#endif
  for (; i < s.size() && s[i] != '\n' && s[i] != '\0'; ++i) high |= static_cast<unsigned char>(s[i]) & 0x80u;
  ascii = high == 0;
  return i;
}

}  // namespace sluice::syslog
