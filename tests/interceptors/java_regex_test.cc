// Java's regular expressions as Flume users write them, through PCRE2: find() and matches(),
// replaceAll's $n/${name}/\$, String.split, and what is refused.

#include <catch2/catch.hpp>

#include <stdexcept>

#include "interceptors/java_regex.h"

using Catch::Contains;
using sluice::interceptors::JavaRegex;

TEST_CASE("find searches anywhere, matches takes the whole, groups that did not take part are null", "[regex]") {
  const JavaRegex digits("(\\d+):(\\d+)");
  std::vector<std::string_view> groups;
  REQUIRE(digits.find("at 12:34 and 5:6", &groups));
  CHECK(groups == std::vector<std::string_view>{"12:34", "12", "34"});
  CHECK_FALSE(digits.matches("at 12:34"));
  CHECK(digits.matches("12:34"));
  const JavaRegex either("(a)|(b)");
  REQUIRE(either.find("b", &groups));
  CHECK(groups[1].data() == nullptr);
  CHECK(groups[2] == "b");
  CHECK(JavaRegex("(?i)ERROR\\b").find("an error here"));
  CHECK(JavaRegex("^(?<level>[A-Z]+) ").find("WARN disk"));
  CHECK(JavaRegex("foo(?=bar)").find("foobar"));  // lookahead: what RE2 would refuse
}

TEST_CASE("replaceAll takes Java's replacement syntax", "[regex]") {
  const JavaRegex pair("(\\w+)=(\\w+)");
  CHECK(pair.replace_all("a=1 b=2", "$2<-$1") == "1<-a 2<-b");
  CHECK(pair.replace_all("a=1", "\\$1 costs \\\\") == "$1 costs \\");
  CHECK(JavaRegex("(?<k>\\w+)=").replace_all("x=1", "${k}:") == "x:1");
  CHECK(JavaRegex("secret=\\S+").replace_all("user=a secret=hunter2 ok", "secret=***") == "user=a secret=*** ok");
  CHECK(JavaRegex("z").replace_all("no match", "y") == "no match");
  CHECK_THROWS_WITH(pair.check_replacement("$3"), Contains("no group 3"));
  CHECK_THROWS_WITH(pair.check_replacement("${nope}"), Contains("no group nope"));
  CHECK_THROWS_WITH(pair.check_replacement("cost $"), Contains("names no group"));
  CHECK_NOTHROW(pair.check_replacement("$2 \\$ $1"));
}

TEST_CASE("split drops trailing empty strings as String.split does, and bad patterns say where", "[regex]") {
  const JavaRegex comma("\\s*,\\s*");
  CHECK(comma.split("a , b,c,,") == std::vector<std::string>{"a", "b", "c"});
  CHECK(comma.split("one") == std::vector<std::string>{"one"});
  CHECK_THROWS_WITH(JavaRegex("(unclosed"), Contains("not a regular expression") && Contains("offset"));
}

TEST_CASE("a pattern that backtracks without end on a hostile line gives up at the match limit", "[regex]") {
  // (a+)+$ on a's ending in b tries 2^n splits: PCRE2 stops at the limit, which is not "no match".
  const JavaRegex catastrophic("(a+)+$");
  std::string hostile(40, 'a');
  hostile += 'b';  // (not `std::string(40, 'a') + "b"`: GCC 12 at -O1 warns of it, -Warray-bounds, wrongly)
  CHECK_THROWS_AS(catastrophic.find(hostile), sluice::interceptors::MatchFailed);
  CHECK_THROWS_AS(catastrophic.replace_all(hostile, "x"), sluice::interceptors::MatchFailed);
  CHECK(JavaRegex("(a)|(b)").replace_all("ab", "[$1$2]") == "[a][b]");  // a group that took no part: empty
  CHECK(catastrophic.find("aaaa"));
}
