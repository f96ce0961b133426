// Agent::reload (a ReloadRun, reload_run.h) and what keeps a reload's leftovers going: channels
// retired with their sinks, sources still draining, counted as they depart.

#include <algorithm>
#include <mutex>
#include <set>

#include <spdlog/spdlog.h>

#include "agent/agent.h"
#include "agent/channel_handover.h"
#include "agent/reload_run.h"

namespace sluice {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

void Agent::depart(const Source& source) { departed_.sources += source.counters(); }
// Levels are summed too: a disk channel replaced on its own directories leaves its events on disk
// (kept on disk) for its successor, which replays them (replayed from disk), so the stopped line's
// books still balance.
void Agent::depart(const Channel& channel) { departed_.channels += channel.counters(); }
void Agent::depart(const Sink& sink) { departed_.sinks += sink.counters(); }

void Agent::count_reload(ReloadOutcome outcome) {
  reloads_[static_cast<size_t>(outcome)].fetch_add(1);
  const bool ok = outcome == ReloadOutcome::applied || outcome == ReloadOutcome::unchanged;
  last_reload_successful_ = ok;
  if (ok) last_success_seconds_ = now_seconds();
}

void Agent::finish_reload(ReloadOutcome outcome) {
  count_reload(outcome);
  spdlog::info("reload: {}", kReloadOutcomes[static_cast<size_t>(outcome)]);
}

void Agent::reload_credentials() {
  for (const auto& source : sources_) source->reload_credentials();
}

ReloadOutcome Agent::reload(const config::AgentConfig& next, std::chrono::milliseconds drain) {
  return ReloadRun(*this, next, drain).run();
}

uint64_t Agent::move_events(Channel& from, Channel& to, uint64_t max_events, bool only_what_close_keeps) {
  const uint64_t moved = sluice::move_events(from, to, max_events, only_what_close_keeps);
  departed_.moved += moved;
  return moved;
}

void Agent::release_storage_for(const Channel& opening, Deadline deadline) {
  for (size_t i = retired_.size(); i-- > 0;) {
    Retired& r = retired_[i];
    if (!share_storage(*r.channel, opening)) continue;
    spdlog::info(
        "reload: channel {} of a previous configuration closes: {} opens on its directories and replays what "
        "it holds ({} events)",
        r.channel->name(), opening.name(), r.channel->counters().events_held);
    for (RetiringSource& source : retiring_)  // settle_retired() counts them and lets them go
      if (std::count(source.channels.begin(), source.channels.end(), r.channel.get())) {
        source.source->stop(deadline);
        std::erase(source.channels, r.channel.get());  // freed below: no pointer to it stays
      }
    for (auto& sink : r.sinks) sink->request_stop(deadline);
    for (auto& sink : r.sinks) {
      sink->stop(deadline);
      depart(*sink);
    }
    r.channel->close();
    const ChannelCounters c = r.channel->counters();
    departed_.lost += c.events_held - c.events_on_disk;
    depart(*r.channel);
    std::unique_lock lock(components_mutex_);
    retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void Agent::settle_retired() {
  for (size_t i = retiring_.size(); i-- > 0;) {
    RetiringSource& r = retiring_[i];
    if (!r.source->wait_retired(Clock::now())) continue;
    r.source->stop(Clock::now());
    depart(*r.source);
    spdlog::info("reload: source {} of the previous configuration has drained and stopped", r.source->name());
    std::unique_lock lock(components_mutex_);
    retiring_.erase(retiring_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  for (size_t i = retired_.size(); i-- > 0;) {
    Retired& r = retired_[i];
    // Empty, and nothing of it still waits in a producer (acks = 0 hands over before delivery),
    // and no source of the previous configuration still puts into it.
    if (r.channel->counters().events_held != 0) continue;
    if (std::any_of(retiring_.begin(), retiring_.end(), [&](const RetiringSource& source) {
          return std::count(source.channels.begin(), source.channels.end(), r.channel.get()) > 0;
        }))
      continue;
    if (std::any_of(r.sinks.begin(), r.sinks.end(),
                    [](const auto& sink) { return sink->counters().events_queued > 0; }))
      continue;
    for (auto& sink : r.sinks) {
      sink->stop(Clock::now() + std::chrono::seconds(5));
      depart(*sink);
    }
    r.channel->close();
    depart(*r.channel);
    spdlog::info("reload: channel {} of the previous configuration is drained and closed", r.channel->name());
    std::unique_lock lock(components_mutex_);
    retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

}  // namespace sluice

namespace sluice {

void Agent::hand_over_retired_disk_channels() {
  for (Retired& r : retired_) {
    if (!r.channel->keeps_contents() || r.channel->counters().events_held == 0) continue;
    Channel* successor = nullptr;
    for (auto& channel : channels_)
      if (channel->name() == r.channel->name() && channel->keeps_contents() && !share_storage(*channel, *r.channel))
        successor = channel.get();
    // Its sinks have stopped: all it holds must reach its disk at close, so no more than that
    // part's room (events and bytes) moves; the rest stays on the old directories, said below,
    // rather than be put in memory and lost at close.
    const uint64_t moved = successor ? move_events(*r.channel, *successor, UINT64_MAX, true) : 0;
    if (moved)
      spdlog::info("channel {}: {} events of its previous directories moved into the running one's", r.channel->name(),
                   moved);
    if (const uint64_t left = r.channel->counters().events_held)
      spdlog::error(
          "channel {}: {} events stay in {}, which the running configuration does not read: start an agent with "
          "that channel's previous settings to deliver them",
          r.channel->name(), left, r.channel->storage());
  }
}

}  // namespace sluice
