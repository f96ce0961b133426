#pragma once
// Finding the next of two bytes, 16 at a time where SSE2 is there (all x86-64): the framer's
// LF-or-NUL and the STRUCTURED-DATA scanner's quote-or-bracket are both on the per-event path.
// The framer's scan also gathers the high bits of what it passed: a line it finds all ASCII needs
// no UTF-8 check of its own.

#include <cstdint>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
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

// The mask of the bits below bit `at` (0-32).
inline unsigned bits_below(unsigned at) { return static_cast<unsigned>((uint64_t{1} << at) - 1); }

// The position of the first LF or NUL at or after pos (or s.size()), and whether every byte from
// pos to there is below 0x80: one more instruction per 16 bytes than find_either. `high` carries
// the high bits of what a wider scan (below) passed before pos. (Without SSE2, the byte loop.)
inline size_t find_line_end_sse2(std::string_view s, size_t pos, bool& ascii, unsigned high = 0) {
  size_t i = pos;
#if defined(__SSE2__)
  const __m128i lf = _mm_set1_epi8('\n'), nul = _mm_setzero_si128();
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const auto ends =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, lf), _mm_cmpeq_epi8(chunk, nul))));
    const auto tops = static_cast<unsigned>(_mm_movemask_epi8(chunk));
    if (ends) {
      const unsigned at = static_cast<unsigned>(__builtin_ctz(ends));
      high |= tops & bits_below(at);  // only the bytes before the end
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

#if defined(__x86_64__) && defined(__GNUC__)
#define SLUICE_HAS_AVX2_SCAN 1
// The same, 32 bytes at a time: the framer's scan of every byte received is the source's largest
// single cost after the parse, and a 120-byte line takes four steps instead of eight. Only called
// where the CPU has AVX2 (find_line_end); the last bytes go through the 16-byte scan.
__attribute__((target("avx2"))) inline size_t find_line_end_avx2(std::string_view s, size_t pos, bool& ascii) {
  size_t i = pos;
  unsigned high = 0;
  const __m256i lf = _mm256_set1_epi8('\n'), nul = _mm256_setzero_si256();
  for (; i + 32 <= s.size(); i += 32) {
    const __m256i chunk = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.data() + i));
    const auto ends = static_cast<unsigned>(
        _mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(chunk, lf), _mm256_cmpeq_epi8(chunk, nul))));
    const auto tops = static_cast<unsigned>(_mm256_movemask_epi8(chunk));
    if (ends) {
      const unsigned at = static_cast<unsigned>(__builtin_ctz(ends));
      high |= tops & bits_below(at);  // only the bytes before the end
      ascii = high == 0;
      return i + at;
    }
    high |= tops;
  }
  return find_line_end_sse2(s, i, ascii, high);
}

// Asked once; libgcc has read the CPU's features before main.
inline bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
}
#endif

// find_line_end_sse2, or its AVX2 form where the CPU has it (known when built for AVX2, else
// asked at run time).
inline size_t find_line_end(std::string_view s, size_t pos, bool& ascii) {
#if defined(__AVX2__)
  return find_line_end_avx2(s, pos, ascii);
#elif defined(SLUICE_HAS_AVX2_SCAN)
  if (cpu_has_avx2()) return find_line_end_avx2(s, pos, ascii);
  return find_line_end_sse2(s, pos, ascii);
#else
  return find_line_end_sse2(s, pos, ascii);
#endif
}

}  // namespace sluice::syslog
