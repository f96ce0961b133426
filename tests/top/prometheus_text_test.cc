// The Prometheus text `sluice top` reads: names, labels with escapes, special values; what
// does not parse is skipped, never fatal.

#include <catch2/catch.hpp>

#include <cmath>

#include "top/prometheus_text.h"

using namespace sluice::top;

TEST_CASE("samples are read with their labels, comments and timestamps are skipped", "[top]") {
  const auto samples = parse_prometheus_text(
      "# HELP sluice_source_events_received_total Events.\n"
      "# TYPE sluice_source_events_received_total counter\n"
      "sluice_source_events_received_total{source=\"r1\",port=\"5140\"} 1200 1700000000000\r\n"
      "sluice_kafka_client_errors_total 3\n"
      "\n"
      "sluice_pipeline_latency_seconds_bucket{sink=\"k1\",le=\"+Inf\"} 42\n");
  REQUIRE(samples.size() == 3);
  CHECK(samples[0].name == "sluice_source_events_received_total");
  CHECK(samples[0].label("source") == "r1");
  CHECK(samples[0].label("port") == "5140");
  CHECK(samples[0].label("absent").empty());
  CHECK(samples[0].value == 1200);
  CHECK(samples[1].labels.empty());
  CHECK(samples[1].value == 3);
  CHECK(samples[2].label("le") == "+Inf");
  CHECK(samples[2].value == 42);
}

TEST_CASE("label values keep escaped quotes, backslashes and newlines, and special values parse", "[top]") {
  const auto samples = parse_prometheus_text(
      "m{a=\"say \\\"hi\\\"\",b=\"c:\\\\d\",c=\"x\\ny\"} +Inf\n"
      "m -Inf\n"
      "m NaN\n"
      "m 1.5e3\n");
  REQUIRE(samples.size() == 4);
  CHECK(samples[0].label("a") == "say \"hi\"");
  CHECK(samples[0].label("b") == "c:\\d");
  CHECK(samples[0].label("c") == "x\ny");
  CHECK(std::isinf(samples[0].value));
  CHECK(samples[1].value < 0);
  CHECK(std::isnan(samples[2].value));
  CHECK(samples[3].value == 1500);
}

TEST_CASE("lines that do not parse are skipped and the rest is read", "[top]") {
  const auto samples = parse_prometheus_text(
      "m{a=\"unterminated} 1\n"
      "{a=\"no name\"} 1\n"
      "m{a=b} 1\n"
      "m not-a-number\n"
      "m{a=\"fine\"} 7\n"
      "last 8");  // no final newline
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].label("a") == "fine");
  CHECK(samples[0].value == 7);
  CHECK(samples[1].name == "last");
}
