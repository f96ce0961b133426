#pragma once
// What the senders whose receiver answers (RELP, Avro) share: events still unanswered at the end
// declared possibly lost with their sequence numbers, and the answers' latency percentiles.

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "loadgen/sender.h"

namespace sluice::loadgen {

// How long a connection waits at the end of its run for its last answers (docs/load-generator.md).
inline constexpr auto kFinalWait = std::chrono::seconds(30);
// The pause before a connection that failed is made again.
inline constexpr auto kReconnectBackoff = std::chrono::milliseconds(200);

// Events [first, first + count) of `result`'s connection never answered: possibly lost.
void declare_unanswered(ConnectionResult& result, uint64_t first, uint64_t count);

// The q-quantile of `latencies` (reordered), 0 if none.
double percentile(std::vector<float>& latencies, double q);

// --connections connections of `Connection` (RELP's, Avro's), each on its own thread with its share
// of --count and --rate, to the targets in turn; their results summed. A Connection is made of
// (options, id, target) and has run(count, rate, start, until), `result`, `acknowledged` and
// `latencies_ms`.
template <class Connection>
SendResult send_acknowledged(const SendOptions& options) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::unique_ptr<Connection>> connections;
  for (int i = 0; i < options.connections; ++i)
    connections.push_back(
        std::make_unique<Connection>(options, options.first_connection + static_cast<uint32_t>(i + 1),
                                     options.targets[static_cast<size_t>(i) % options.targets.size()]));
  const auto start = Clock::now();
  const auto until = start + options.duration;
  const double per_connection = options.rate / options.connections;
  const uint64_t count = options.count;
  std::vector<std::thread> threads;
  for (int i = 0; i < options.connections; ++i) {
    // The count shared out: the first connections take the remainder.
    const uint64_t share =
        count ? count / options.connections + (static_cast<uint64_t>(i) < count % options.connections) : 0;
    if (count && share == 0) continue;
    threads.emplace_back(
        [&, i, share] { connections[static_cast<size_t>(i)]->run(share, per_connection, start, until); });
  }
  for (std::thread& t : threads) t.join();
  SendResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.cpu_seconds = process_cpu_seconds();
  std::vector<float> latencies;
  for (auto& c : connections) {
    result.sent += c->result.sent;
    result.possibly_lost += c->result.possibly_lost;
    result.reconnects += c->result.reconnects;
    result.connects_failed += c->result.connects_failed;
    result.acknowledged += c->acknowledged;
    latencies.insert(latencies.end(), c->latencies_ms.begin(), c->latencies_ms.end());
    if (c->result.sent == 0 && !c->result.error.empty()) ++result.failed_for_good;
    result.connections.push_back(c->result);
  }
  result.ack_p50_ms = percentile(latencies, 0.50);
  result.ack_p99_ms = percentile(latencies, 0.99);
  return result;
}

}  // namespace sluice::loadgen
