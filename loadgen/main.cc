// sluice-loadgen: a rate-controlled syslog-over-TCP blaster whose every event carries a
// connection id and sequence number, and (--verify) the verifier that reads them back from
// Kafka and proves none was lost or duplicated.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "agent/config/property_values.h"
#include "loadgen/sender.h"
#include "loadgen/verifier.h"
#include "sinks/kafka/topic_reader.h"

namespace {

std::chrono::milliseconds duration_arg(const std::string& text, const std::string& option) {
  return sluice::config::parse_duration(text, {option, {"command line", 0}}, {.min = 0, .max = 86'400'000});
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sluice::loadgen;
  CLI::App app{"sluice-loadgen: send numbered syslog events over TCP; --verify reads them back from Kafka"};
  std::vector<std::string> targets;
  SendOptions send;
  std::string duration = "10s", summary_json, bootstrap, topic = "ApacheLog", expect_file, idle = "2s", timeout = "120s";
  bool verify = false, quiet = false, offsets = false, watch = false;
  std::string csv;
  app.add_option("-t,--target", targets, "host:port to send to (repeat, or space-separate, for several)");
  app.add_option("-c,--connections", send.connections, "TCP connections, spread round-robin over the targets")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--threads", send.threads, "Sender threads; 0 = min(connections, 2)")->capture_default_str();
  app.add_option("-r,--rate", send.rate, "Events per second over all connections; 0 = as fast as possible")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  std::string ramp = "0s";
  app.add_option("--ramp", ramp, "Rise linearly from 0 to --rate over this long (e.g. 20s)")->capture_default_str();
  app.add_option("-s,--size", send.size, "Bytes per event, newline included")->capture_default_str();
  app.add_option("-d,--duration", duration, "How long to send (e.g. 10s, 2m)")->capture_default_str();
  app.add_option("-n,--count", send.count, "Total events to send; stops early when reached (0 = no limit)");
  app.add_option("--summary-json", summary_json, "Write the send summary (per-connection counts) here, for --verify --expect");
  app.add_flag("-q,--quiet", quiet, "No live progress");
  app.add_flag("--verify", verify, "Verify mode: read the topic back from Kafka and check every event arrived once");
  app.add_option("--bootstrap", bootstrap, "Verify: Kafka bootstrap servers");
  app.add_option("--topic", topic, "Verify: topic to read")->capture_default_str();
  app.add_option("--expect", expect_file, "Verify: the sender's --summary-json, so that lost tail events count too");
  app.add_option("--idle", idle, "Verify: stop after every partition is read to its end and nothing new came for this long")
      ->capture_default_str();
  app.add_option("--timeout", timeout, "Verify: give up after this long")->capture_default_str();
  app.add_flag("--offsets", offsets, "Print the messages stored in the topic (sum of high watermarks) and exit");
  app.add_flag("--watch-offsets", watch,
               "Every second for --duration, print (and with --csv, write) the messages stored and the rate");
  app.add_option("--csv", csv, "--watch-offsets: write elapsed_s,stored,events_per_s rows here");
  CLI11_PARSE(app, argc, argv);

  try {
    if (offsets || watch) {
      if (bootstrap.empty()) throw std::invalid_argument("--offsets and --watch-offsets need --bootstrap");
      sluice::kafka::TopicReader reader(bootstrap, topic);
      auto stored = [&] {
        uint64_t total = 0;
        for (const auto& p : reader.offsets(std::chrono::seconds(10))) total += static_cast<uint64_t>(p.high);
        return total;
      };
      if (offsets) {
        std::cout << stored() << "\n";
        return 0;
      }
      std::ofstream rows;
      if (!csv.empty()) {
        rows.open(csv);
        rows << "elapsed_s,stored,events_per_s\n";
      }
      const auto start = std::chrono::steady_clock::now();
      const auto end = start + duration_arg(duration, "--duration");
      uint64_t last = stored();
      auto last_time = std::chrono::steady_clock::now();
      for (auto next = start + std::chrono::seconds(1); next <= end; next += std::chrono::seconds(1)) {
        std::this_thread::sleep_until(next);
        const uint64_t now_stored = stored();
        const auto now = std::chrono::steady_clock::now();
        const double rate = (now_stored - last) / std::chrono::duration<double>(now - last_time).count();
        const double elapsed = std::chrono::duration<double>(now - start).count();
        if (!quiet) std::fprintf(stderr, "offsets: %6.1fs stored %12llu  %10.0f ev/s\n", elapsed,
                                 static_cast<unsigned long long>(now_stored), rate);
        if (rows.is_open()) rows << elapsed << "," << now_stored << "," << static_cast<uint64_t>(rate) << std::endl;
        last = now_stored;
        last_time = now;
      }
      std::cout << last << "\n";
      return 0;
    }
    if (verify) {
      if (bootstrap.empty()) throw std::invalid_argument("--verify needs --bootstrap");
      const auto expected = expect_file.empty() ? std::map<uint32_t, uint64_t>{} : read_expected_from_summary(expect_file);
      const Verdict verdict = verify_topic(bootstrap, topic, expected, duration_arg(idle, "--idle"),
                                           duration_arg(timeout, "--timeout"));
      std::cout << verdict.report();
      return verdict.ok() ? 0 : 1;
    }
    if (targets.empty()) throw std::invalid_argument("give at least one --target host:port");
    for (const std::string& t : targets)
      for (const std::string& word : sluice::config::parse_word_list(t)) send.targets.push_back(parse_target(word));
    send.duration = duration_arg(duration, "--duration");
    send.ramp = duration_arg(ramp, "--ramp");
    if (send.duration.count() == 0) throw std::invalid_argument("--duration must be positive: every run is bounded in time");
    if (quiet) send.progress_interval = std::chrono::milliseconds(0);
    const SendResult result = send_events(send);
    std::fprintf(stderr, "loadgen: sent %llu events in %.2f s: %.0f events/s over %zu connection(s)%s\n",
                 static_cast<unsigned long long>(result.sent), result.seconds, result.rate(), result.connections.size(),
                 result.ok() ? "" : " (with connection errors)");
    if (!summary_json.empty()) std::ofstream(summary_json) << result.to_json();
    return result.ok() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "sluice-loadgen: " << e.what() << "\n";
    return 2;
  }
}
