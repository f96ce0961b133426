#pragma once
// One running agent: its channels, sinks and sources, built from an AgentConfig.
//
// Lifecycle (main thread): Agent(config) builds and validates every component without
// touching the network (that is all `--check` does) → start(): channels open, then sinks
// (a Kafka sink starts the embedded cluster if it uses one), then sources → stop(timeout): sources stop reading and put
// what they read; sinks drain the channels into Kafka and flush; whatever is left is counted and logged.

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "agent/api/channel.h"
#include "agent/api/component_spec.h"
#include "agent/api/config_tree.h"
#include "agent/api/sink.h"
#include "agent/api/source.h"

namespace sluice {

struct AgentTotals {
  uint64_t events_in = 0;   // events the sources put into channels
  uint64_t events_out = 0;  // events sinks sent (handed over or acknowledged)
  uint64_t events_failed = 0;
  uint64_t channel_held = 0;
  uint64_t channel_capacity = 0;
  std::chrono::nanoseconds put_blocked{0};  // sources waiting for room, summed
  int64_t sinks_queued = 0;                 // events waiting in the sinks' clients (Kafka producers)
};

// The most memory the agent can hold, by part (memory_bound.h; docs/memory.md): each part's sum, and the total with the
// allocator's share. memory::kUnbounded where a setting bounds nothing.
struct MemoryBound {
  uint64_t base = 0, sources = 0, channels = 0, sinks = 0, total = 0;
  std::string describe() const;  // "612 MiB (base 32 MiB, sources ..., ...)"
};

// What a reload came to (sluice_config_reloads_total{result}).
enum class ReloadOutcome : uint8_t {
  applied,    // validated and applied
  unchanged,  // validated; nothing to apply (credentials are read again)
  refused,    // did not validate: the running configuration stays as it was
  failed,     // validated, but applying it failed in part (a port taken): logged, see the log
};
inline constexpr std::array<std::string_view, 4> kReloadOutcomes{"applied", "unchanged", "refused", "failed"};

// A source from its spec, with its interceptors (source_interceptors.h) in `context`.
std::unique_ptr<Source> make_source(const config::ComponentConfig& component, std::vector<Channel*> channels,
                                    BuildContext& context);

// The sink groups of one build, by name: made by the first of their sinks (make_sink).
using SinkGroups = std::map<std::string, std::shared_ptr<SinkGroup>>;

// The sink `component` of `config` draining `channel`, in its sink group if it is in one (made
// once per build, kept in `groups`; a default group's sink runs alone).
std::unique_ptr<Sink> make_sink(const config::AgentConfig& config, const config::ComponentConfig& component,
                                Channel& channel, BuildContext& context, SinkGroups& groups);

class Agent {
 public:
  explicit Agent(const config::AgentConfig& config);
  ~Agent();

  void start();
  // Returns the number of events known lost during shutdown (0 on a clean drain).
  uint64_t stop(std::chrono::milliseconds timeout);

  // SIGHUP (and --watch-config): `next` is validated as completely as at start (a refusal
  // changes nothing and is logged as at start), then what changed is applied while the rest runs
  // on: components whose settings are unchanged are kept as they are (connections, contents);
  // changed or removed sources stop as at shutdown (their events are put first); a changed
  // channel is drained into Kafka by its sinks (until `drain` passes), and what is left moves into
  // its successor (kept on disk for it, for a disk channel); a removed channel is drained in the
  // background by its sinks; a changed or removed sink stops taking and settles what it took.
  // From the main thread, while running.
  ReloadOutcome reload(const config::AgentConfig& next, std::chrono::milliseconds drain);
  // A reload refused before it reached the agent (the file did not parse): counted.
  void count_reload(ReloadOutcome outcome);
  // Removed channels drained empty since the last call: their sinks stop and they close. From the
  // main thread, now and then.
  void settle_retired();
  // SIGHUP with an unchanged configuration: the sources read their credentials again.
  void reload_credentials();

  // key=value lines for --ready-file: ports actually bound, and what sinks add (the embedded
  // Kafka's bootstrap).
  std::string ready_info() const;
  AgentTotals totals() const;
  // The bound of the configuration that runs (or that --check built).
  MemoryBound memory_bound() const;
  // The components, for the metrics endpoint's thread: hold the lock while using them (a reload
  // replaces them under it).
  std::shared_lock<std::shared_mutex> lock_components() const { return std::shared_lock(components_mutex_); }
  const std::vector<std::unique_ptr<Source>>& sources() const { return sources_; }
  const std::vector<std::unique_ptr<Channel>>& channels() const { return channels_; }
  const std::vector<std::unique_ptr<Sink>>& sinks() const { return sinks_; }
  const SinkGroups& sink_groups() const { return sink_groups_; }
  size_t source_count() const { return sources_.size(); }
  size_t channel_count() const { return channels_.size(); }
  size_t sink_count() const { return sinks_.size(); }
  uint64_t reloads(ReloadOutcome outcome) const { return reloads_[static_cast<size_t>(outcome)].load(); }
  // Seconds since the epoch of the last reload that was applied (or of the start), and whether
  // the last reload was (Prometheus' own config_last_reload_* gauges, for alerting).
  double last_reload_success_seconds() const { return last_success_seconds_.load(); }
  bool last_reload_successful() const { return last_reload_successful_.load(); }

 private:
  friend class ReloadRun;  // reload_run.h: the steps of reload()
  // A channel a reload removed, with its sinks, drained in the background until it is empty.
  struct Retired {
    std::unique_ptr<Channel> channel;
    std::vector<std::unique_ptr<Sink>> sinks;
  };
  // A source a reload stopped that a full channel still holds: it drains in the background into
  // `channels` (which stay open for it) until it is done, or the agent stops.
  struct RetiringSource {
    std::unique_ptr<Source> source;
    std::vector<Channel*> channels;
  };
  // The counts of components a reload stopped, for the totals and the account at stop.
  struct Departed {
    SourceCounters sources;
    ChannelCounters channels;
    SinkCounters sinks;
    uint64_t moved = 0;  // events moved from a replaced channel into its successor: put twice
    uint64_t lost = 0;   // events a replaced disk channel held and could not write to disk
  };

  void check_delivered_commits(const config::AgentConfig& config, const config::ComponentConfig& source,
                               std::string_view property) const;
  void depart(const Source& source);
  void depart(const Channel& channel);
  void depart(const Sink& sink);
  void finish_reload(ReloadOutcome outcome);
  // channel_handover.h, counted as moved.
  uint64_t move_events(Channel& from, Channel& to, uint64_t max_events = UINT64_MAX,
                       bool only_what_close_keeps = false);
  // At the agent's stop: what a retired disk channel still holds moves into the channel of its
  // name that runs now, if that one keeps its contents on other directories; the rest is left
  // where the running configuration will not read it, and said so.
  void hand_over_retired_disk_channels();
  // Before a disk channel opens: a retired one of an earlier configuration on the same
  // directories (a dataDir changed back) closes first, its sinks and the sources still putting
  // into it stopped; what it holds stays on disk, and the opening channel replays it.
  void release_storage_for(const Channel& opening, Deadline deadline);

  SharedState shared_;  // first: it outlives every component
  config::AgentConfig config_;
  std::vector<std::unique_ptr<Channel>> channels_;  // in config_'s order, as sinks_ and sources_
  std::vector<std::unique_ptr<Sink>> sinks_;
  SinkGroups sink_groups_;  // of sinks_: a group's sinks all stay or all go at a reload
  std::vector<std::unique_ptr<Source>> sources_;
  std::vector<Retired> retired_;
  std::vector<RetiringSource> retiring_;
  Departed departed_;
  mutable std::shared_mutex components_mutex_;
  std::array<std::atomic<uint64_t>, kReloadOutcomes.size()> reloads_{};
  std::atomic<double> last_success_seconds_{0};
  std::atomic<bool> last_reload_successful_{true};
  bool running_ = false;
};

}  // namespace sluice
