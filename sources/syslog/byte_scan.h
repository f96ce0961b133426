#pragma once
// Finding the next of two bytes, 16 at a time where SSE2 is there (all x86-64): the framer's
// LF-or-NUL and the STRUCTURED-DATA scanner's quote-or-bracket are both on the per-event path.

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

}  // namespace sluice::syslog
