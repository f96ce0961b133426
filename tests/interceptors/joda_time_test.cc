// Joda-Time patterns for the regex extractor's millis serializer.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <ctime>
#include <stdexcept>

#include "interceptors/joda_time.h"

using sluice::interceptors::JodaPattern;

namespace {

// Runs `check` with the process in zone `tz`, then puts the zone back.
template <class Check>
void in_zone(const char* tz, Check check) {
  const char* before = std::getenv("TZ");
  const std::string saved = before ? before : "";
  ::setenv("TZ", tz, 1);
  ::tzset();
  check();
  if (before)
    ::setenv("TZ", saved.c_str(), 1);
  else
    ::unsetenv("TZ");
  ::tzset();
}

}  // namespace

TEST_CASE("the user guide's example and the common shapes parse to epoch milliseconds", "[joda]") {
  // The guide: 2012-10-18 18:47 with yyyy-MM-dd HH:mm is 1350611220000 in a zone 7 hours west of UTC.
  in_zone("UTC+7", [] { CHECK(JodaPattern("yyyy-MM-dd HH:mm").parse_millis("2012-10-18 18:47") == 1350611220000); });
  in_zone("UTC", [] {
    CHECK(JodaPattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ").parse_millis("2026-12-04T05:00:01.003+0100") ==
          1796360401003 - 3600000);
    CHECK(JodaPattern("dd/MMM/yyyy:HH:mm:ss Z").parse_millis("04/Dec/2026:05:00:01 +00:00") == 1796360401000);
    CHECK(JodaPattern("yyyyMMddHHmmss").parse_millis("20261204050001") == 1796360401000);
    CHECK(JodaPattern("MMMM d, yyyy h:mm a").parse_millis("December 4, 2026 5:00 PM") == 1796403600000);
    CHECK(JodaPattern("HH:mm").parse_millis("01:00") == 3600000);  // the rest defaults to 1970-01-01
  });
}

TEST_CASE("text not wholly in the pattern does not parse, and unknown letters are refused", "[joda]") {
  const JodaPattern pattern("yyyy-MM-dd");
  CHECK_FALSE(pattern.parse_millis("2026-12-04 extra"));
  CHECK_FALSE(pattern.parse_millis("2026-13-04"));
  CHECK_FALSE(pattern.parse_millis("yesterday"));
  CHECK_THROWS_AS(JodaPattern("yyyy-ww"), std::invalid_argument);
  CHECK_THROWS_AS(JodaPattern("'unclosed"), std::invalid_argument);
  // More than 9 letters of a number would read more digits than an int holds.
  CHECK_THROWS_WITH(JodaPattern("yyyyyyyyyy"), Catch::Contains("at most 9 letters"));
  CHECK_THROWS_WITH(JodaPattern("HH:mm:ss.SSSSSSSSSS"), Catch::Contains("at most 9 letters"));
  CHECK(JodaPattern("ss.SSSSSSSSS").parse_millis("07.123456789") == 7123);
}
