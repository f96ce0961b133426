// LogLimiter: the first line at once, then one per interval saying how many were held back.

#include <catch2/catch.hpp>

#include <deque>

#include <atomic>
#include <thread>
#include <vector>

#include "agent/api/log_limiter.h"
#include "tests/support/eventually.h"
#include "tests/support/test_thread.h"

using namespace sluice;
using namespace std::chrono_literals;

TEST_CASE("a log limiter lets the first line through, holds the rest back and then says how many it held", "[log]") {
  LogLimiter limiter(1s);  // long enough that the two calls right after the first fall inside it
  const std::optional<std::string> first = limiter.next();
  REQUIRE(first.has_value());
  CHECK(*first == "");  // nothing was suppressed before it
  CHECK_FALSE(limiter.next().has_value());
  CHECK_FALSE(limiter.next().has_value());
  std::optional<std::string> later;
  // The interval passes: the next line is let through, with the count of the ones held back
  // meanwhile (the two above, and those this wait itself asked about).
  uint64_t asked = 0;
  REQUIRE(sluice::test::eventually(
      [&] {
        ++asked;
        return (later = limiter.next()).has_value();
      },
      5s));
  CHECK(*later == " [" + std::to_string(2 + asked - 1) + " similar lines suppressed]");
  CHECK_FALSE(limiter.next().has_value());  // and the interval starts again
}

TEST_CASE("a log limiter shared by threads lets exactly one line through per interval", "[log]") {
  LogLimiter limiter(10s);
  std::atomic<int> through{0};
  std::deque<test::TestThread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        if (limiter.next()) ++through;
    });
  for (test::TestThread& t : threads) t.join();
  CHECK(through == 1);
}
