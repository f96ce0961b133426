// sluice-loadgen --receive: a discard receiver that counts what senders send, to measure senders
// against.

#include <cstdio>
#include <thread>

#include "loadgen/cli/commands.h"
#include "loadgen/receiver.h"

namespace sluice::loadgen::cli {
namespace {

// --receive: count and discard what senders send, for `duration`.
int receive(uint16_t port, std::chrono::milliseconds duration, bool quiet) {
  CountingReceiver receiver(port);
  std::fprintf(stderr, "receiver: listening on 127.0.0.1:%u for %.0f s\n", receiver.port(), duration.count() / 1000.0);
  const auto start = std::chrono::steady_clock::now();
  uint64_t last = 0;
  for (auto next = start + std::chrono::seconds(1); next <= start + duration; next += std::chrono::seconds(1)) {
    std::this_thread::sleep_until(next);
    const uint64_t events = receiver.events();
    if (!quiet)
      std::fprintf(stderr, "receiver: %10llu ev/s  total %12llu\n", static_cast<unsigned long long>(events - last),
                   static_cast<unsigned long long>(events));
    last = events;
  }
  receiver.stop();
  std::printf("{\"received\":%llu,\"bytes\":%llu,\"connections\":%llu}\n",
              static_cast<unsigned long long>(receiver.events()), static_cast<unsigned long long>(receiver.bytes()),
              static_cast<unsigned long long>(receiver.connections_accepted()));
  return 0;
}

}  // namespace

void add_receive_options(CLI::App& app, ReceiveCommand& r) {
  app.add_option("--receive", r.port,
                 "Discard receiver: listen on this loopback port (0: any) for --duration, count events");
}

int run_receive(const ReceiveCommand& r, const CommonOptions& common) {
  return receive(static_cast<uint16_t>(r.port), duration_arg(common.duration, "--duration"), common.quiet);
}

}  // namespace sluice::loadgen::cli
