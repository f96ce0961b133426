// Spill and replay rates of the file channel (the spillable channel with no memory) on this
// machine: 1000-event batches of 120-byte Apache lines put to disk, then taken and committed
// (read back, CRC-checked, decompressed, released), per fsync policy; median of --runs.
//
//   build/bin/sluice-spill-bench [--events 2000000] [--runs 3] [--dir /var/tmp]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "channels/spillable/batch_codec.h"
#include "channels/spillable/spillable_channel.h"

using namespace sluice;
using Seconds = std::chrono::duration<double>;

namespace {

EventBatch apache_batch(int first, int n) {
  EventBatchBuilder builder;
  for (int i = first; i < first + n; ++i) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "<134>Nov 30 11:07:06 web-07 httpd: 10.1.%d.%d - - [30/Nov/2026:11:07:06 +0000] \"GET /lg/%05d/%010d "
                  "HTTP/1.1\" 200 %d",
                  i % 200, i % 250, i % 4, i, 100 + i % 900);
    std::string text(line);
    text.resize(119, 'x');
    builder.append(text);
  }
  return builder.seal();
}

struct Result {
  double spill_events_per_s, spill_mb_per_s, replay_events_per_s, replay_mb_per_s, ratio;
};

Result run(const std::string& dir, const std::string& fsync, int events) {
  std::filesystem::remove_all(dir);
  config::ComponentConfig component;
  component.kind = config::Kind::channel;
  component.name = "bench";
  component.key_prefix = "bench.channels.bench";
  component.type = "file";
  for (const auto& [k, v] : std::map<std::string, std::string>{{"dataDir", dir},
                                                               {"fsync", fsync},
                                                               {"transactionCapacity", "1000"},
                                                               {"minimumRequiredSpace", "0"},
                                                               {"maxBytesOnDisk", "0"}})
    component.properties[k] = config::PropertyValue{v, {"bench", 1}};
  auto channel = kFileChannelSpec.make_channel(component);
  channel->open();
  std::vector<EventBatch> batches;
  for (int i = 0; i < events; i += 1000) batches.push_back(apache_batch(i, 1000));
  uint64_t raw = 0;
  for (const EventBatch& b : batches) raw += b.bytes();
  const auto spill_start = std::chrono::steady_clock::now();
  for (EventBatch& b : batches)
    if (!channel->put(b, Clock::now() + std::chrono::seconds(60))) throw std::runtime_error("put refused");
  const double spill_s = Seconds(std::chrono::steady_clock::now() - spill_start).count();
  const uint64_t on_disk = static_cast<SpillableChannel&>(*channel).spill_counters().bytes_on_disk;
  const auto replay_start = std::chrono::steady_clock::now();
  uint64_t replayed = 0;
  for (Take t = channel->take(1000, Clock::now()); !t.empty(); t = channel->take(1000, Clock::now())) {
    replayed += t.events;
    channel->commit(t);
  }
  const double replay_s = Seconds(std::chrono::steady_clock::now() - replay_start).count();
  if (replayed != static_cast<uint64_t>(events)) throw std::runtime_error("replayed " + std::to_string(replayed));
  channel.reset();
  std::filesystem::remove_all(dir);
  return {events / spill_s, raw / spill_s / 1e6, events / replay_s, raw / replay_s / 1e6,
          static_cast<double>(raw) / static_cast<double>(on_disk)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sluice-spill-bench: spill and replay rates of the file channel"};
  int events = 2'000'000, runs = 3;
  std::string base = std::filesystem::temp_directory_path().string();
  app.add_option("--events", events, "Events per run")->capture_default_str();
  app.add_option("--runs", runs, "Runs per fsync policy (the median is printed)")->capture_default_str();
  app.add_option("--dir", base, "Where the channel's directory is made")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);
  const std::string dir = base + "/sluice-spill-bench-" + std::to_string(::getpid());
  std::printf(
      "| fsync | spill events/s | spill MB/s | replay events/s | replay MB/s | compression |\n|---|---|---|---|---|---|\n");
  for (const std::string fsync : {"never", "interval", "batch"}) {
    std::vector<double> se, sm, re, rm, ratio;
    for (int r = 0; r < runs; ++r) {
      const Result x = run(dir, fsync, events);
      se.push_back(x.spill_events_per_s);
      sm.push_back(x.spill_mb_per_s);
      re.push_back(x.replay_events_per_s);
      rm.push_back(x.replay_mb_per_s);
      ratio.push_back(x.ratio);
    }
    std::printf("| %s | %.0f | %.0f | %.0f | %.0f | %.2fx |\n", fsync.c_str(), median(se), median(sm), median(re),
                median(rm), median(ratio));
  }
  return 0;
}
