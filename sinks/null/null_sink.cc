#include "sinks/null/null_sink.h"

#include "sinks/null/null_sink_config.h"

namespace sluice {
namespace {

std::unique_ptr<Sink> make_null_sink(const config::ComponentConfig& component, Channel& channel,
                                     BuildContext& context) {
  const NullSinkConfig c = config::bind(kNullSinkProperties, component);
  return std::make_unique<NullSink>(component.name, batch_size_for(component, "batchSize", c.batch_size, channel),
                                    channel, context.sink_group);
}

}  // namespace

const ComponentSpec kNullSinkSpec{
    .kind = config::Kind::sink,
    .type = "null",
    .aliases = {"org.apache.flume.sink.NullSink"},
    .doc = "Takes events from its channel and discards them (benchmarks, tests).",
    .describe = [] { return config::describe(kNullSinkProperties); },
    .make_sink = &make_null_sink,
};

NullSink::NullSink(std::string name, size_t batch_size, Channel& channel, SinkGroupMember group)
    : name_(std::move(name)), batch_size_(batch_size), channel_(channel), group_(std::move(group)) {}

NullSink::~NullSink() {
  if (thread_.joinable()) stop(Clock::now());
}

void NullSink::start() {
  thread_ = std::thread([this] {
    while (!retiring_.load()) {
      if (!group_.may_take()) {  // another sink of its group takes now
        if (draining_.load() && (channel_.counters().events_held == 0 || Clock::now() >= deadline_)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polls its group, as a take would wait
        continue;
      }
      Take take = channel_.take(batch_size_, Clock::now() + std::chrono::milliseconds(100));
      if (take.empty()) {
        group_.took_nothing();
        // In a group, what another member took may still come back to the channel.
        if (draining_.load() && (!group_ || channel_.counters().events_held == 0 || Clock::now() >= deadline_)) break;
        continue;
      }
      group_.settled(true);  // it never fails
      const Clock::time_point taken_at = Clock::now();
      channel_.commit(take);
      latency_.committed(take, taken_at);
      events_.fetch_add(take.events, std::memory_order_relaxed);
      batches_.fetch_add(1, std::memory_order_relaxed);
      if (draining_.load() && Clock::now() >= deadline_) break;
    }
  });
}

void NullSink::stop(Deadline deadline) {
  if (!thread_.joinable()) return;
  if (!retiring_.load()) {
    deadline_ = deadline;
    draining_.store(true);
  }
  thread_.join();
}

// It commits each take at once: nothing is in flight between takes; the take in hand is its last.
void NullSink::retire(Deadline) { retiring_.store(true); }

SinkCounters NullSink::counters() const {
  SinkCounters c;
  c.events_taken = c.events_sent = events_.load();
  c.batches = batches_.load();
  c.latency = latency_.snapshot();
  return c;
}

}  // namespace sluice
