// The view `sluice top` draws from two scrapes: rates over the interval, levels now, latency
// of the interval from the histogram's increase, failures since the start; lines fit the width.

#include <catch2/catch.hpp>

#include <algorithm>

#include "top/top_view.h"

using namespace sluice::top;
using namespace std::chrono_literals;

namespace {

Scrape scrape_at(std::chrono::steady_clock::time_point at, const std::string& text) {
  return Scrape{at, parse_prometheus_text(text)};
}

// An agent with one source, channel and sink, at `events` received/sent so far; latency
// buckets as given (cumulative, le = 0.001 0.01 +Inf).
std::string agent_text(double events, double blocked_seconds, double b1, double b2, double b3,
                       const std::string& extra = "") {
  const std::string e = std::to_string(events);
  return "sluice_source_events_received_total{source=\"r1\"} " + e +
         "\n"
         "sluice_source_bytes_received_total{source=\"r1\"} " +
         std::to_string(events * 120) +
         "\n"
         "sluice_source_connections{source=\"r1\"} 4\n"
         "sluice_channel_events{channel=\"c1\"} 15000\n"
         "sluice_channel_capacity_events{channel=\"c1\"} 60000\n"
         "sluice_channel_events_put_total{channel=\"c1\"} " +
         e + "\nsluice_channel_events_taken_total{channel=\"c1\"} " + e +
         "\nsluice_channel_put_blocked_seconds_total{channel=\"c1\"} " + std::to_string(blocked_seconds) +
         "\nsluice_sink_events_sent_total{sink=\"k1\"} " + e +
         "\nsluice_sink_kafka_queue_messages{sink=\"k1\"} 321\n"
         "sluice_kafka_broker_up{sink=\"k1\",broker=\"b1\"} 1\n"
         "sluice_kafka_broker_up{sink=\"k1\",broker=\"b2\"} 0\n"
         "sluice_kafka_broker_rtt_avg_seconds{sink=\"k1\",broker=\"b1\"} 0.0005\n"
         "sluice_kafka_broker_rtt_avg_seconds{sink=\"k1\",broker=\"b2\"} 0.002\n"
         "sluice_pipeline_latency_seconds_bucket{sink=\"k1\",le=\"0.001\"} " +
         std::to_string(b1) + "\nsluice_pipeline_latency_seconds_bucket{sink=\"k1\",le=\"0.01\"} " +
         std::to_string(b2) + "\nsluice_pipeline_latency_seconds_bucket{sink=\"k1\",le=\"+Inf\"} " +
         std::to_string(b3) + "\n" + extra;
}

bool any_line(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("rates are the increase over the interval, levels are the latest, per component", "[top]") {
  const auto t0 = std::chrono::steady_clock::now();
  const Scrape before = scrape_at(t0, agent_text(1000, 1.0, 0, 0, 0));
  const Scrape now = scrape_at(t0 + 2s, agent_text(201000, 1.5, 0, 0, 0));
  const TopView v = compute_view(before, now);
  CHECK(v.seconds == Approx(2));
  REQUIRE(v.sources.size() == 1);
  CHECK(v.sources[0].name == "r1");
  CHECK(v.sources[0].events_per_s == Approx(100000));
  CHECK(v.sources[0].bytes_per_s == Approx(100000 * 120));
  CHECK(v.sources[0].connections == 4);
  REQUIRE(v.channels.size() == 1);
  CHECK(v.channels[0].events == 15000);
  CHECK(v.channels[0].capacity == 60000);
  CHECK(v.channels[0].blocked_percent == Approx(25));  // 0.5 s of 2
  CHECK(v.channels[0].disk_events == -1);              // a memory channel: nothing on disk
  REQUIRE(v.sinks.size() == 1);
  CHECK(v.sinks[0].sent_per_s == Approx(100000));
  CHECK(v.sinks[0].kafka_queue == 321);
  CHECK(v.sinks[0].brokers == 2);
  CHECK(v.sinks[0].brokers_up == 1);
  CHECK(v.sinks[0].rtt_avg_ms == Approx(2));  // the worst broker
  CHECK(v.events_in_per_s == Approx(100000));
}

TEST_CASE("a counter that went down (the agent restarted) counts its new value, not a negative rate", "[top]") {
  const auto t0 = std::chrono::steady_clock::now();
  const TopView v =
      compute_view(scrape_at(t0, agent_text(900000, 0, 0, 0, 0)), scrape_at(t0 + 1s, agent_text(5000, 0, 0, 0, 0)));
  CHECK(v.sources[0].events_per_s == Approx(5000));
}

TEST_CASE("the latency shown is that of the interval: the histogram's increase, interpolated in its bucket", "[top]") {
  const auto t0 = std::chrono::steady_clock::now();
  // Before: 1,000 events all under 1 ms. In the interval: 100 more under 1 ms, 900 in 1-10 ms.
  const Scrape before = scrape_at(t0, agent_text(1000, 0, 1000, 1000, 1000));
  const Scrape now = scrape_at(t0 + 1s, agent_text(2000, 0, 1100, 2000, 2000));
  const TopView v = compute_view(before, now);
  // p50: rank 500 of 1,000; 100 below 1 ms, so 400 of the 900 in (1 ms, 10 ms]: 1 + 9 * 400/900 ms.
  CHECK(v.sinks[0].latency_p50_ms == Approx(1 + 9.0 * 400 / 900));
  CHECK(v.sinks[0].latency_p99_ms == Approx(1 + 9.0 * 890 / 900));
  // Nothing committed in an interval: no latency, not the whole run's.
  const Scrape idle = scrape_at(t0 + 2s, agent_text(2000, 0, 1100, 2000, 2000));
  CHECK(compute_view(now, idle).sinks[0].latency_p99_ms == -1);
  // Buckets that went down (the agent restarted): what they hold now is all of the interval.
  const Scrape restarted = scrape_at(t0 + 2s, agent_text(100, 0, 0, 100, 100));
  CHECK(compute_view(now, restarted).sinks[0].latency_p50_ms == Approx(1 + 9.0 * 50 / 100));
  // Beyond the last finite bound: the last bound.
  CHECK(histogram_quantile_between(now, scrape_at(t0 + 3s, agent_text(2000, 0, 1100, 2000, 2100)),
                                   "sluice_pipeline_latency_seconds", "sink", "k1", 0.5) == Approx(0.01));
}

TEST_CASE("failures since the start are listed by component and reason with their rate", "[top]") {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string failures_before =
      "sluice_sink_delivery_errors_total{sink=\"k1\",reason=\"msg_size_too_large\"} 10\n"
      "sluice_source_connections_refused_total{source=\"r1\",reason=\"not_allowed\"} 0\n";
  const std::string failures_now =
      "sluice_sink_delivery_errors_total{sink=\"k1\",reason=\"msg_size_too_large\"} 14\n"
      "sluice_source_connections_refused_total{source=\"r1\",reason=\"not_allowed\"} 2\n"
      "sluice_source_events_filtered_total{source=\"r1\"} 7\n"
      "sluice_source_optional_copies_dropped_total{source=\"r1\",channel=\"c2\"} 5\n"
      "sluice_config_reloads_total{result=\"refused\"} 1\n"
      "sluice_config_reloads_total{result=\"applied\"} 3\n";
  const TopView v = compute_view(scrape_at(t0, agent_text(0, 0, 0, 0, 0, failures_before)),
                                 scrape_at(t0 + 2s, agent_text(0, 0, 0, 0, 0, failures_now)));
  REQUIRE(v.failures.size() == 5);
  CHECK(v.failures[0].component == "sink k1");
  CHECK(v.failures[0].reason == "msg_size_too_large");
  CHECK(v.failures[0].total == 14);
  CHECK(v.failures[0].per_s == Approx(2));
  CHECK(v.failures[1].component == "source r1");
  CHECK(v.failures[1].what == "connections refused");
  CHECK(v.failures[2].what == "filtered by interceptors");
  CHECK(v.failures[2].total == 7);
  CHECK(v.failures[3].what == "optional copies dropped");
  CHECK(v.failures[3].component == "source r1");
  CHECK(v.failures[3].reason == "channel c2");
  CHECK(v.failures[4].what == "reloads");
  CHECK(v.failures[4].reason == "refused");
  const auto lines = render_view(v, "title");
  CHECK(any_line(lines, "msg_size_too_large"));
  CHECK(any_line(lines, "delivery failed"));
}

TEST_CASE("the screen has every component, says when rates are not known yet, and fits the terminal", "[top]") {
  const auto t0 = std::chrono::steady_clock::now();
  const Scrape first = scrape_at(t0, agent_text(1000, 0, 0, 0, 0));
  const auto waiting = render_view(compute_view(first, first), "sluice top  127.0.0.1:1");
  CHECK(any_line(waiting, "rates after the next refresh"));
  CHECK(any_line(waiting, "FAILURES  none counted"));
  const auto full = render_view(compute_view(first, scrape_at(t0 + 1s, agent_text(3001000, 0, 0, 0, 0))), "sluice top");
  const auto lines = fit_to_screen(full, 60, 0);
  REQUIRE(lines.size() == full.size());
  CHECK(any_line(lines, "3,000,000 events/s"));
  CHECK(any_line(lines, "r1"));
  CHECK(any_line(lines, "c1"));
  CHECK(any_line(lines, "k1"));
  // One column short: a line filling the width would leave the cursor waiting to wrap.
  for (const std::string& line : lines) CHECK(line.size() <= 59);
  // A terminal of 10 rows: 9 lines, and on the bottom row what was left out.
  const auto short_screen = fit_to_screen(full, 200, 10);
  REQUIRE(short_screen.size() == 10);
  CHECK(short_screen[8] == full[8]);
  CHECK(short_screen[9] == "... " + std::to_string(full.size() - 9) + " more lines (a taller terminal shows them)");
  CHECK(fit_to_screen(full, 200, full.size()) == full);
  CHECK(fit_to_screen(full, 200, 1) == std::vector<std::string>{full[0]});  // the title alone
  CHECK(fit_to_screen(full, 200, 2) ==
        std::vector<std::string>{
            full[0], "... " + std::to_string(full.size() - 1) + " more lines (a taller terminal shows them)"});
}
