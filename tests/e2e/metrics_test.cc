// The metrics endpoint end to end: /metrics and /metrics.json scraped over HTTP while the load
// generator runs and after, checked against what it sent and what Kafka holds.

#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <regex>
#include <thread>

#include "tests/support/pipeline.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

// The sum of a Flume JSON field over every component whose key starts with `prefix`.
uint64_t flume_sum(const std::string& json, const std::string& prefix, const std::string& field) {
  uint64_t sum = 0;
  const std::regex component("\"" + prefix + "[^\"]*\":\\{[^}]*\"" + field + "\":\"([0-9]+)\"");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), component); it != std::sregex_iterator(); ++it)
    sum += std::stoull((*it)[1]);
  return sum;
}

// True once the server has ended the connection (it may answer first: 408, 413) within `timeout`.
bool ended_by_server(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (closed_by_peer(fd, 100ms)) return true;  // else nothing yet, or a byte of an answer: read on
  }
  return false;
}

}  // namespace

TEST_CASE("the counters on /metrics and /metrics.json equal what was sent and what Kafka holds", "[e2e][metrics]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), {"acks = all", "linger.ms = 5"}), "t", {"--metrics", "127.0.0.1:0"});
  REQUIRE(p.metrics_port() > 0);
  // Scraped while the load runs (2.5 s of it), until a scrape shows it part way: not a guess at
  // when that is.
  std::string during;
  std::atomic<bool> sending{true};
  TestThread scraper([&] {
    const auto give_up = std::chrono::steady_clock::now() + 120s;  // bounded even if the send never returns
    while (sending && std::chrono::steady_clock::now() < give_up) {
      std::string text = http_get(p.metrics_port(), "/metrics");
      const double received = prometheus_sum(text, "sluice_source_events_received_total");
      if (received > 0 && received < 100000) {
        during = std::move(text);
        return;
      }
      std::this_thread::sleep_for(50ms);
    }
  });
  const int sent = p.send({"-c", "4", "-n", "100000", "-r", "40000"});
  sending = false;
  scraper.join();
  REQUIRE(sent == 0);
  INFO(during);
  CHECK(prometheus_sum(during, "sluice_source_events_received_total") > 0);
  CHECK(prometheus_sum(during, "sluice_source_events_received_total") < 100000);

  std::string report;
  REQUIRE(p.verify(report) == 0);
  const std::string text = http_get(p.metrics_port(), "/metrics");
  const std::string json = http_get(p.metrics_port(), "/metrics.json");
  INFO(text << json);
  CHECK(prometheus_sum(text, "sluice_source_events_received_total") == 100000);
  CHECK(prometheus_sum(text, "sluice_source_bytes_received_total") == 100000 * 120);
  CHECK(prometheus_sum(text, "sluice_channel_events_put_total") == 100000);
  CHECK(prometheus_sum(text, "sluice_channel_events") == 0);
  CHECK(prometheus_sum(text, "sluice_sink_events_sent_total") == 100000);
  CHECK(prometheus_sum(text, "sluice_sink_batch_seconds_count") > 0);
  // Latency is observed per event (its batch's stamp), for every event acknowledged.
  CHECK(prometheus_sum(text, "sluice_pipeline_latency_seconds_count") == 100000);
  CHECK(prometheus_sum(text, "sluice_pipeline_channel_wait_seconds_count") == 100000);
  CHECK(prometheus_sum(text, "sluice_pipeline_delivery_seconds_count") == 100000);
  CHECK(prometheus_sum(text, "sluice_pipeline_latency_seconds_sum") > 0);
  CHECK(prometheus_sum(text, "sluice_pipeline_latency_seconds_sum") ==
        Approx(prometheus_sum(text, "sluice_pipeline_channel_wait_seconds_sum") +
               prometheus_sum(text, "sluice_pipeline_delivery_seconds_sum"))
            .epsilon(0.01));
  CHECK(prometheus_sum(text, "sluice_source_connections_accepted_total") == 4);
  CHECK(prometheus_sum(text, "sluice_kafka_broker_up") == 10);  // each sink's producer sees the one broker
  // Round-trip times are per statistics interval: an idle interval reports 0.
  CHECK_THAT(text, Catch::Contains("sluice_kafka_broker_rtt_p99_seconds{sink=\"k9\""));
  CHECK(p.stored() == 100000);

  CHECK(flume_sum(json, "SOURCE.", "EventReceivedCount") == 100000);
  CHECK(flume_sum(json, "SOURCE.", "EventAcceptedCount") == 100000);
  CHECK(flume_sum(json, "CHANNEL.", "ChannelSize") == 0);
  CHECK(flume_sum(json, "CHANNEL.", "EventPutSuccessCount") == 100000);
  CHECK(flume_sum(json, "SINK.", "EventDrainSuccessCount") == 100000);
  CHECK(p.stop_agent(60s) == std::optional<int>(0));
}

TEST_CASE("clients that trickle requests to the metrics endpoint, or send huge ones, are cut and scrapes go on",
          "[e2e][metrics]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), {"acks = 1"}), "t", {"--metrics", "127.0.0.1:0"});
  // As many unfinished requests as the endpoint has threads, and one far over its size bound.
  std::vector<int> tricklers;
  for (int i = 0; i < 4; ++i) {
    tricklers.push_back(connect_loopback(static_cast<uint16_t>(p.metrics_port())));
    REQUIRE(::send(tricklers.back(), "GET /metr", 9, MSG_NOSIGNAL) == 9);
  }
  const int huge = connect_loopback(static_cast<uint16_t>(p.metrics_port()));
  const std::string header = "GET /metrics HTTP/1.1\r\nX-Padding: " + std::string(64 * 1024, 'x');
  ::send(huge, header.data(), header.size(), MSG_NOSIGNAL);
  // A scrape now, every thread held: served once the first trickler is cut by the request
  // timeout (2 s; civetweb's default held a thread 30 s).
  auto scrape = std::async(std::launch::async, [&] { return http_get(p.metrics_port(), "/metrics"); });
  REQUIRE(scrape.wait_for(10s) == std::future_status::ready);
  CHECK_THAT(scrape.get(), Catch::Contains("sluice_source_events_received_total"));
  // Each is cut, not left to hold a thread.
  for (int fd : tricklers) CHECK(ended_by_server(fd, 10s));
  CHECK(ended_by_server(huge, 10s));
  for (int fd : tricklers) ::close(fd);
  ::close(huge);
  CHECK_THAT(http_get(p.metrics_port(), "/metrics"), Catch::Contains("sluice_source_events_received_total"));
  CHECK(p.stop_agent(30s) == 0);
}
