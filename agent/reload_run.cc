#include "agent/reload_run.h"

#include <algorithm>
#include <mutex>

#include <spdlog/spdlog.h>

#include "agent/api/listener_pool.h"
#include "agent/channel_handover.h"
#include "agent/component_registry.h"

namespace sluice {
namespace {

// A reload's drain (sources letting go, replaced channels emptied into Kafka) stays well under
// systemd's WatchdogSec and TimeoutStopSec (30 s, 45 s): what is not drained by then moves over or
// drains in the background.
constexpr std::chrono::milliseconds kReloadDrainMax{10'000};

// What did not start is left out of the configuration too: the next reload tries it again.
template <typename Objects>
void drop_missing(Objects& objects, std::vector<config::ComponentConfig>& configs) {
  for (size_t i = objects.size(); i-- > 0;)
    if (!objects[i]) {
      objects.erase(objects.begin() + static_cast<std::ptrdiff_t>(i));
      configs.erase(configs.begin() + static_cast<std::ptrdiff_t>(i));
    }
}

}  // namespace

ReloadRun::ReloadRun(Agent& agent, const config::AgentConfig& next, std::chrono::milliseconds drain)
    : agent_(agent), running_(agent.config_), next_(next), drain_(drain), applied_(next), context_{agent.shared_} {}

ReloadOutcome ReloadRun::refuse(const std::string& message) {
  spdlog::error("{}", message);
  agent_.finish_reload(ReloadOutcome::refused);
  return ReloadOutcome::refused;
}

ReloadOutcome ReloadRun::run() {
  // Validated as at start, by building every component of it (nothing runs, nothing binds).
  try {
    Agent candidate(next_);
  } catch (const config::ConfigError& e) {
    return refuse(fmt::format("reload refused: {}; the running configuration stays", e.what()));
  }
  if (next_.monitoring_address.value != running_.monitoring_address.value)
    spdlog::warn("reload: {}.monitoring.address changed; the metrics endpoint moves only at a restart",
                 next_.agent_name);
  plan_ = plan_reload(running_, next_);
  if (plan_.unchanged) {
    spdlog::info("reload: the configuration is unchanged; sources read their credentials again");
    agent_.reload_credentials();
    agent_.finish_reload(ReloadOutcome::unchanged);
    return ReloadOutcome::unchanged;
  }
  spdlog::info("reload: {}", plan_.summary);
  keep_sink_ = plan_.keep_sink;
  if (auto refused = build()) return refuse(*refused);
  if (auto refused = storage_conflict()) return refuse(*refused);
  if (auto refused = reserve_listeners()) return refuse(*refused);
  // Bounded well under systemd's watchdog and stop timeouts (the caller feeds the watchdog): what
  // cannot be drained by then moves over, or drains in the background.
  deadline_ = Clock::now() + std::min(drain_, kReloadDrainMax);
  retire_sources();
  drain_stopping_channels();
  open_channels();
  move_replaced_contents();
  start_background_sinks();
  start_sinks();
  retire_replaced_sinks();
  start_sources();
  swap_in();
  const ReloadOutcome outcome = failed_ ? ReloadOutcome::failed : ReloadOutcome::applied;
  agent_.finish_reload(outcome);
  return outcome;
}

// What is new, in next_'s order; a component kept is taken over as it is. Nothing new runs yet,
// nothing old has stopped: a failure here changes nothing.
std::optional<std::string> ReloadRun::build() {
  for (size_t i = 0; i < running_.channels.size(); ++i)
    if (plan_.keep_channel[i]) kept_channels_[running_.channels[i].name] = agent_.channels_[i].get();
  channels_.resize(next_.channels.size());
  sinks_.resize(next_.sinks.size());
  sources_.resize(next_.sources.size());
  std::map<std::string, Channel*> by_name = kept_channels_;
  try {
    for (size_t i = 0; i < next_.channels.size(); ++i) {
      if (!plan_.build_channel[i]) continue;
      channels_[i] = find_component(next_.channels[i]).make_channel(next_.channels[i]);
      by_name[next_.channels[i].name] = channels_[i].get();
    }
    for (size_t i = 0; i < next_.sinks.size(); ++i)
      if (plan_.build_sink[i])
        sinks_[i] = make_sink(next_, next_.sinks[i], *by_name.at(next_.sinks[i].channels.front()), context_, groups_);
    for (size_t i = 0; i < next_.sources.size(); ++i) {
      if (!plan_.build_source[i]) continue;
      std::vector<Channel*> targets;
      for (const std::string& name : next_.sources[i].channels) targets.push_back(by_name.at(name));
      sources_[i] = make_source(next_.sources[i], std::move(targets), context_);
    }
  } catch (const config::ConfigError& e) {
    return fmt::format("reload refused: {}; the running configuration stays", e.what());
  }
  return std::nullopt;
}

// A disk channel may not open the directories a running channel of another name holds (a
// channel renamed, two channels' directories swapped): they are locked while it runs, and its
// events are its own. Refused before anything stops; two reloads, or a restart, do it.
std::optional<std::string> ReloadRun::storage_conflict() const {
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (!channels_[i] || !channels_[i]->keeps_contents()) continue;
    for (size_t o = 0; o < agent_.channels_.size(); ++o) {
      const Channel& old = *agent_.channels_[o];
      if (old.keeps_contents() && running_.channels[o].name != next_.channels[i].name &&
          share_storage(old, *channels_[i]))
        return fmt::format(
            "reload refused: channel {} would open the directories channel {} uses ({}); the running configuration "
            "stays (give the new channel directories of its own, or move them in two reloads, or restart)",
            next_.channels[i].name, running_.channels[o].name, old.storage());
    }
  }
  return std::nullopt;
}

// Listening sockets (listener_pool.h): a port a source that goes listens on is handed to the new
// source that listens on it, never closed in between; the new sources' other ports are bound now,
// so that one another program holds refuses the reload before anything stops.
std::optional<std::string> ReloadRun::reserve_listeners() {
  listeners_ = agent_.shared_.get<ListenerPool>();
  std::set<std::string> held;
  std::set<uint16_t> freed;
  for (size_t i = 0; i < agent_.sources_.size(); ++i) {
    if (plan_.keep_source[i]) continue;
    for (const std::string& key : agent_.sources_[i]->listener_keys()) held.insert(key);
    for (const uint16_t port : agent_.sources_[i]->listening_ports()) freed.insert(port);
  }
  std::set<std::string> handed_over;
  for (const auto& source : sources_)
    if (source)
      for (const std::string& key : source->listener_keys())
        if (held.count(key)) {
          listeners_->expect(key);
          handed_over.insert(key);
        }
  try {
    for (const auto& source : sources_)
      if (source) source->reserve_listeners(handed_over, freed);
  } catch (const config::ConfigError& e) {
    listeners_->settle();
    return fmt::format("reload refused: {}; the running configuration stays", e.what());
  }
  return std::nullopt;
}

// 1. The sources that stay read their credentials again, as SIGHUP always had them do; those
//    that go let go of their ports and drain as at shutdown, but with no deadline of their own:
//    one that a full channel holds past the reload's drain time goes on in the background
//    (Agent::retiring_) rather than drop what it read. What they read is in their (old) channels.
void ReloadRun::retire_sources() {
  auto& sources = agent_.sources_;
  source_retiring_.assign(sources.size(), false);
  for (size_t i = 0; i < sources.size(); ++i) {
    if (plan_.keep_source[i])
      sources[i]->reload_credentials();
    else if (sources[i]->retire(deadline_))
      source_retiring_[i] = true;
    else
      sources[i]->stop(deadline_);
  }
  for (size_t i = 0; i < sources.size(); ++i)
    if (source_retiring_[i] && sources[i]->wait_retired(deadline_)) {
      sources[i]->stop(deadline_);  // done: its threads end at once
      source_retiring_[i] = false;
    }
  // The channels a source still draining in the background feeds (one this reload retires, or
  // an earlier one did): they stay open for it.
  for (const Agent::RetiringSource& r : agent_.retiring_) fed_by_retiring_.insert(r.channels.begin(), r.channels.end());
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!source_retiring_[i]) continue;
    spdlog::warn(
        "reload: source {} is still draining (a full channel or open connections); it goes on in the background",
        running_.sources[i].name);
    for (const std::string& name : running_.sources[i].channels)
      fed_by_retiring_.insert(agent_.channels_[index_named(running_.channels, name)].get());
  }
}

// 2. Channels that go: their sinks drain them into Kafka until the deadline (a removed one's
//    keep doing so in the background). The objects stay in the agent's vectors, which the metrics
//    endpoint reads, until swap_in().
void ReloadRun::drain_stopping_channels() {
  std::vector<Sink*> draining;
  for (size_t i = 0; i < agent_.channels_.size(); ++i) {
    if (plan_.keep_channel[i]) continue;
    for (size_t k = 0; k < agent_.sinks_.size(); ++k)
      if (plan_.sink_fate[k] == SinkFate::drains_then_stops &&
          running_.sinks[k].channels.front() == running_.channels[i].name)
        draining.push_back(agent_.sinks_[k].get());
    if (!plan_.successor[i]) {
      spdlog::info("reload: channel {} was removed; its sinks drain it ({} events) before it closes",
                   running_.channels[i].name, agent_.channels_[i]->counters().events_held);
      removed_.push_back(i);
      continue;
    }
    const size_t s = *plan_.successor[i];
    Channel* old = agent_.channels_[i].get();
    replaced_.push_back({old, i, s, share_storage(*old, *channels_[s])});
    // Its successor opens on the same directories only once it is closed: nothing may still put.
    if (replaced_.back().same_storage && fed_by_retiring_.count(old)) stop_sources_putting_into(i);
  }
  for (Sink* sink : draining) sink->request_stop(deadline_);  // side by side
  for (Sink* sink : draining) {
    sink->stop(deadline_);
    agent_.depart(*sink);
  }
  close_channels_reopened_on_their_directories();
}

void ReloadRun::stop_sources_putting_into(size_t channel) {
  const std::string& name = running_.channels[channel].name;
  Channel* old = agent_.channels_[channel].get();
  const auto stop_now = [&](Source& source) {
    spdlog::warn("reload: source {} stops now: its channel {} is reopened on the same directories", source.name(),
                 name);
    source.stop(Clock::now());
  };
  for (size_t k = 0; k < agent_.sources_.size(); ++k)
    if (source_retiring_[k] &&
        std::count(running_.sources[k].channels.begin(), running_.sources[k].channels.end(), name)) {
      stop_now(*agent_.sources_[k]);
      source_retiring_[k] = false;
    }
  for (Agent::RetiringSource& r : agent_.retiring_)  // settle_retired() counts them and lets them go
    if (std::count(r.channels.begin(), r.channels.end(), old)) {
      stop_now(*r.source);
      std::erase(r.channels, old);  // closed and freed by this reload
    }
}

// A disk channel is closed before its successor on the same directories opens (they are locked
// while open); what it could not write to disk is lost, and counted.
void ReloadRun::close_channels_reopened_on_their_directories() {
  for (const Replaced& r : replaced_) {
    if (!r.same_storage) continue;
    r.old->close();
    const ChannelCounters c = r.old->counters();
    agent_.departed_.lost += c.events_held - c.events_on_disk;
    if (c.events_on_disk)
      spdlog::info("reload: channel {}: {} events kept on disk for its successor, which replays them", r.old->name(),
                   c.events_on_disk);
  }
}

// 3. New channels open.
void ReloadRun::open_channels() {
  opened_.assign(channels_.size(), false);
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (!channels_[i]) continue;
    try {
      // Its own drain time: the reload's has usually passed by now, in the outage this is for.
      if (channels_[i]->keeps_contents()) agent_.release_storage_for(*channels_[i], Clock::now() + kReloadDrainMax / 2);
      channels_[i]->open();
      opened_[i] = true;
    } catch (const config::ConfigError& e) {
      spdlog::error("reload: channel {} cannot open: {}; it is left out, with its sources and sinks",
                    next_.channels[i].name, e.what());
      failed_ = true;
    }
  }
}

// What a replaced channel still holds moves into its successor, in order, as far as the
// successor has room — a disk channel's events too, into its successor on other directories,
// which the new configuration reads after a restart (the old ones it would not); the rest stays
// in the old channel, drained in the background by sinks of its old settings (settle_retired),
// and at a shutdown moves over then.
void ReloadRun::move_replaced_contents() {
  for (const Replaced& r : replaced_) {
    if (r.same_storage) {
      agent_.depart(*r.old);
      continue;
    }
    Channel* successor = opened_[r.successor] ? channels_[r.successor].get() : nullptr;
    const uint64_t moved = successor ? agent_.move_events(*r.old, *successor) : 0;
    if (moved)
      spdlog::info("reload: channel {}: {} events not yet sent moved into its successor", r.old->name(), moved);
    if (const uint64_t left = r.old->counters().events_held) {
      spdlog::warn("reload: channel {}: {} events stay in it, drained in the background by sinks of its old settings",
                   r.old->name(), left);
      kept_draining_.push_back(r.old_index);
    } else if (fed_by_retiring_.count(r.old)) {
      kept_draining_.push_back(r.old_index);  // open, with its old sinks, for the source still putting into it
    } else {
      r.old->close();
      agent_.depart(*r.old);
    }
  }
}

// The sinks of the old settings for what stays in a replaced channel: built and started now
// (they were validated once).
void ReloadRun::start_background_sinks() {
  for (const size_t i : kept_draining_) {
    Agent::Retired r{nullptr, {}};
    for (const config::ComponentConfig& c : running_.sinks) {
      if (c.channels.front() != running_.channels[i].name) continue;
      try {
        // Alone, not in its group: it only drains this channel, whatever became of the others.
        std::unique_ptr<Sink> sink = find_component(c).make_sink(c, *agent_.channels_[i], context_);
        sink->start();
        r.sinks.push_back(std::move(sink));
      } catch (const std::exception& e) {
        spdlog::error("reload: channel {}: sink {} of its old settings cannot start: {}", running_.channels[i].name,
                      c.name, e.what());
        failed_ = true;
      }
    }
    drain_in_background_.push_back(std::move(r));
  }
}

bool ReloadRun::channel_open(const std::string& name) const {
  return kept_channels_.count(name) || opened_[index_named(next_.channels, name)];
}

// 4. New sinks start; one that cannot (its producer refused) is left out, and what the plan says
//    goes on in its place does (plan_sink_fallback).
void ReloadRun::start_sinks() {
  std::set<size_t> not_started;
  for (size_t i = 0; i < sinks_.size(); ++i) {
    if (!sinks_[i]) continue;
    try {
      if (!channel_open(next_.sinks[i].channels.front())) throw config::ConfigError("its channel did not open");
      sinks_[i]->start();
    } catch (const std::exception& e) {
      spdlog::error("reload: sink {} did not start: {}", next_.sinks[i].name, e.what());
      sinks_[i].reset();
      failed_ = true;
      not_started.insert(i);
    }
  }
  fall_back(plan_sink_fallback(plan_, running_, next_, not_started));
}

void ReloadRun::fall_back(const SinkFallback& fallback) {
  for (const SinkFallback::Group& group : fallback.groups)
    spdlog::warn("reload: sink group {} keeps its previous settings: one of its new sinks did not start", group.name);
  for (const size_t i : fallback.stop_again) {
    sinks_[i]->stop(Clock::now());
    agent_.depart(*sinks_[i]);
    sinks_[i].reset();
  }
  for (const size_t i : fallback.fall_back)
    if (plan_.fallback[i]) {
      applied_.sinks[i] = running_.sinks[*plan_.fallback[i]];
      spdlog::warn("reload: sink {} goes on with its previous settings", next_.sinks[i].name);
    }
  keep_sink_ = fallback.keep_sink;
  for (const SinkFallback::Group& group : fallback.groups) {
    groups_.erase(group.name);
    const auto in_applied = std::find_if(applied_.sinkgroups.begin(), applied_.sinkgroups.end(),
                                         [&](const config::ComponentConfig& c) { return c.name == group.name; });
    if (!group.previous) {
      applied_.sinkgroups.erase(in_applied);
      continue;
    }
    *in_applied = running_.sinkgroups[*group.previous];
    const auto running_group = agent_.sink_groups_.find(group.name);
    if (running_group == agent_.sink_groups_.end() || !running_group->second) continue;
    for (const size_t member : group.leaving) running_group->second->leave(member);
  }
}

// The sinks replaced on channels that stay stop taking and settle, side by side.
void ReloadRun::retire_replaced_sinks() {
  std::vector<Sink*> retiring;
  for (size_t k = 0; k < agent_.sinks_.size(); ++k)
    if (plan_.sink_fate[k] == SinkFate::retires && !keep_sink_[k]) retiring.push_back(agent_.sinks_[k].get());
  for (Sink* sink : retiring) sink->retire(deadline_);
  for (Sink* sink : retiring) {
    sink->stop(deadline_);
    agent_.depart(*sink);
  }
}

// 5. New sources start, on the sockets handed over or bound for them; what no source adopted
//    (its successor did not start) closes as at a shutdown.
void ReloadRun::start_sources() {
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (!sources_[i]) continue;
    try {
      for (const std::string& channel : next_.sources[i].channels)
        if (!channel_open(channel)) throw config::ConfigError("a channel it fills did not open");
      sources_[i]->start();
    } catch (const std::exception& e) {  // a port taken by another program, say
      spdlog::error("reload: source {} did not start: {}; it is left out until a reload that works",
                    next_.sources[i].name, e.what());
      sources_[i].reset();
      failed_ = true;
    }
  }
  listeners_->settle();
}

// 6. The new set replaces the old one (under the lock the metrics endpoint takes); what was kept
//    moves across, what stopped is counted and freed: sources first, then sinks, then the
//    channels they used.
void ReloadRun::swap_in() {
  std::unique_lock lock(agent_.components_mutex_);
  take_over_kept();
  park_stopped_sources();
  park_draining_channels();
  drop_missing(channels_, applied_.channels);
  drop_missing(sinks_, applied_.sinks);
  drop_missing(sources_, applied_.sources);
  agent_.sources_ = std::move(sources_);
  agent_.sinks_ = std::move(sinks_);
  agent_.channels_ = std::move(channels_);
  agent_.config_ = std::move(applied_);  // running_ is the new configuration from here on
  settle_sink_groups();
}

void ReloadRun::take_over_kept() {
  for (size_t i = 0; i < next_.channels.size(); ++i) {
    if (channels_[i] && !opened_[i]) channels_[i].reset();  // did not open: left out
    if (!channels_[i])
      for (size_t o = 0; o < running_.channels.size(); ++o)
        if (plan_.keep_channel[o] && running_.channels[o].name == next_.channels[i].name)
          channels_[i] = std::move(agent_.channels_[o]);
  }
  for (size_t i = 0; i < next_.sinks.size(); ++i)
    if (!sinks_[i])
      for (size_t o = 0; o < running_.sinks.size(); ++o)
        if (keep_sink_[o] && running_.sinks[o].name == next_.sinks[i].name) sinks_[i] = std::move(agent_.sinks_[o]);
  for (size_t i = 0; i < next_.sources.size(); ++i)
    if (!sources_[i])
      for (size_t o = 0; o < running_.sources.size(); ++o)
        if (plan_.keep_source[o] && running_.sources[o].name == next_.sources[i].name)
          sources_[i] = std::move(agent_.sources_[o]);
}

// Stopped sources are counted and freed; one still draining goes on in the background, with the
// channels it puts into (a kept one now among the new channels).
void ReloadRun::park_stopped_sources() {
  for (size_t o = 0; o < agent_.sources_.size(); ++o) {
    if (!agent_.sources_[o]) continue;
    if (!source_retiring_[o]) {
      agent_.depart(*agent_.sources_[o]);
      continue;
    }
    Agent::RetiringSource r{std::move(agent_.sources_[o]), {}};
    for (const std::string& name : running_.sources[o].channels) {
      const size_t c = index_named(running_.channels, name);
      r.channels.push_back(agent_.channels_[c] ? agent_.channels_[c].get()
                                               : channels_[index_named(next_.channels, name)].get());
    }
    agent_.retiring_.push_back(std::move(r));
  }
}

// Removed channels, and replaced ones that still hold events, go on draining out of sight of the
// metrics.
void ReloadRun::park_draining_channels() {
  for (const size_t i : removed_) {
    Agent::Retired r{std::move(agent_.channels_[i]), {}};
    for (size_t k = 0; k < agent_.sinks_.size(); ++k)
      if (plan_.sink_fate[k] == SinkFate::drains_in_background &&
          running_.sinks[k].channels.front() == running_.channels[i].name)
        r.sinks.push_back(std::move(agent_.sinks_[k]));
    agent_.retired_.push_back(std::move(r));
  }
  for (size_t j = 0; j < kept_draining_.size(); ++j) {
    drain_in_background_[j].channel = std::move(agent_.channels_[kept_draining_[j]]);
    agent_.retired_.push_back(std::move(drain_in_background_[j]));
  }
}

// A group's sinks were all rebuilt (it has a new object) or all kept (it keeps its own). A group
// replaced or removed is dissolved: its sinks still running (draining a removed channel) take
// alone.
void ReloadRun::settle_sink_groups() {
  SinkGroups running_groups;
  for (const config::ComponentConfig& g : agent_.config_.sinkgroups)
    running_groups[g.name] = groups_.count(g.name) ? groups_[g.name] : agent_.sink_groups_[g.name];
  for (const auto& [name, group] : agent_.sink_groups_)
    if (group && (!running_groups.count(name) || running_groups[name] != group)) group->dissolve();
  agent_.sink_groups_ = std::move(running_groups);
}

}  // namespace sluice
