// sluice-loadgen --offsets and --watch-offsets: what the topic holds (the sum of its partitions'
// high watermarks), once or every second with its rate.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "loadgen/cli/commands.h"
#include "sinks/kafka/topic_reader.h"

namespace sluice::loadgen::cli {
namespace {

uint64_t stored_messages(kafka::TopicReader& reader) {
  uint64_t total = 0;
  for (const auto& p : reader.offsets(std::chrono::seconds(10))) total += static_cast<uint64_t>(p.high);
  return total;
}

// --watch-offsets: the topic's stored count and rate once a second, for `duration`.
int watch_offsets(const std::string& bootstrap, const std::string& topic, std::chrono::milliseconds duration,
                  const std::string& csv, bool quiet) {
  kafka::TopicReader reader(bootstrap, topic);
  std::ofstream rows;
  if (!csv.empty()) {
    rows.open(csv);
    rows << "elapsed_s,stored,events_per_s\n";
  }
  const auto start = std::chrono::steady_clock::now();
  uint64_t last = stored_messages(reader);
  auto last_time = std::chrono::steady_clock::now();
  for (auto next = start + std::chrono::seconds(1); next <= start + duration; next += std::chrono::seconds(1)) {
    std::this_thread::sleep_until(next);
    const uint64_t now_stored = stored_messages(reader);
    const auto now = std::chrono::steady_clock::now();
    const double rate = (now_stored - last) / std::chrono::duration<double>(now - last_time).count();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (!quiet)
      std::fprintf(stderr, "offsets: %6.1fs stored %12llu  %10.0f ev/s\n", elapsed,
                   static_cast<unsigned long long>(now_stored), rate);
    if (rows.is_open()) rows << elapsed << "," << now_stored << "," << static_cast<uint64_t>(rate) << std::endl;
    last = now_stored;
    last_time = now;
  }
  std::cout << last << "\n";
  return 0;
}

}  // namespace

void add_offsets_options(CLI::App& app, OffsetsCommand& o) {
  app.add_flag("--offsets", o.offsets, "Print the messages stored in the topic (sum of high watermarks) and exit");
  app.add_flag("--watch-offsets", o.watch,
               "Every second for --duration, print (and with --csv, write) the messages stored and the rate");
}

int run_offsets(const OffsetsCommand& o, const CommonOptions& common) {
  if (common.bootstrap.empty()) throw std::invalid_argument("--offsets and --watch-offsets need --bootstrap");
  if (o.watch)
    return watch_offsets(common.bootstrap, common.topic, duration_arg(common.duration, "--duration"), common.csv,
                         common.quiet);
  kafka::TopicReader reader(common.bootstrap, common.topic);
  std::cout << stored_messages(reader) << "\n";
  return 0;
}

}  // namespace sluice::loadgen::cli
