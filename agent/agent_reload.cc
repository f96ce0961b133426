// Agent::reload: a new configuration applied to the running agent, what changed and only that.

#include <algorithm>
#include <mutex>
#include <set>

#include <spdlog/spdlog.h>

#include "agent/agent.h"
#include "agent/api/listener_pool.h"
#include "agent/channel_handover.h"
#include "agent/component_registry.h"
#include "agent/reload_plan.h"

namespace sluice {
namespace {

// A reload's drain (sources letting go, replaced channels emptied into Kafka) stays well under
// systemd's WatchdogSec and TimeoutStopSec (30 s, 45 s): what is not drained by then moves over or
// drains in the background.
constexpr std::chrono::milliseconds kReloadDrainMax{10'000};

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
  // Validated as at start, by building every component of it (nothing runs, nothing binds).
  try {
    Agent candidate(next);
  } catch (const config::ConfigError& e) {
    spdlog::error("reload refused: {}; the running configuration stays", e.what());
    finish_reload(ReloadOutcome::refused);
    return ReloadOutcome::refused;
  }
  if (next.monitoring_address.value != config_.monitoring_address.value)
    spdlog::warn("reload: {}.monitoring.address changed; the metrics endpoint moves only at a restart",
                 next.agent_name);

  // What stays as it runs, what stops, what replaces what (reload_plan.h).
  ReloadPlan plan = plan_reload(config_, next);
  if (plan.unchanged) {
    spdlog::info("reload: the configuration is unchanged; sources read their credentials again");
    reload_credentials();
    finish_reload(ReloadOutcome::unchanged);
    return ReloadOutcome::unchanged;
  }
  spdlog::info("reload: {}", plan.summary);
  const std::vector<bool>& keep_channel = plan.keep_channel;
  const std::vector<bool>& keep_source = plan.keep_source;
  std::vector<bool>& keep_sink = plan.keep_sink;  // a sink whose successor cannot start goes on
  std::map<std::string, Channel*> kept_channels;
  for (size_t i = 0; i < config_.channels.size(); ++i)
    if (keep_channel[i]) kept_channels[config_.channels[i].name] = channels_[i].get();

  // Build what is new, in `next`'s order; a component kept is taken over as it is. Nothing new
  // runs yet, nothing old has stopped: a failure here changes nothing.
  std::vector<std::unique_ptr<Channel>> channels(next.channels.size());
  std::vector<std::unique_ptr<Sink>> sinks(next.sinks.size());
  std::vector<std::unique_ptr<Source>> sources(next.sources.size());
  std::map<std::string, Channel*> by_name = kept_channels;
  BuildContext context{shared_};
  SinkGroups groups;  // of the sinks built now; a group whose sinks are kept keeps its object
  try {
    for (size_t i = 0; i < next.channels.size(); ++i) {
      if (kept_channels.count(next.channels[i].name)) continue;
      channels[i] = find_component(next.channels[i]).make_channel(next.channels[i]);
      by_name[next.channels[i].name] = channels[i].get();
    }
    for (size_t i = 0; i < next.sinks.size(); ++i) {
      const config::ComponentConfig* old = component_named(config_.sinks, next.sinks[i].name);
      if (old && keep_sink[static_cast<size_t>(old - config_.sinks.data())]) continue;
      sinks[i] = make_sink(next, next.sinks[i], *by_name.at(next.sinks[i].channels.front()), context, groups);
    }
    for (size_t i = 0; i < next.sources.size(); ++i) {
      const config::ComponentConfig* old = component_named(config_.sources, next.sources[i].name);
      if (old && keep_source[static_cast<size_t>(old - config_.sources.data())]) continue;
      std::vector<Channel*> targets;
      for (const std::string& name : next.sources[i].channels) targets.push_back(by_name.at(name));
      sources[i] = make_source(next.sources[i], std::move(targets), context);
    }
  } catch (const config::ConfigError& e) {
    spdlog::error("reload refused: {}; the running configuration stays", e.what());
    finish_reload(ReloadOutcome::refused);
    return ReloadOutcome::refused;
  }

  // A disk channel may not open the directories a running channel of another name holds (a
  // channel renamed, two channels' directories swapped): they are locked while it runs, and its
  // events are its own. Refused before anything stops; two reloads, or a restart, do it.
  for (size_t i = 0; i < channels.size(); ++i) {
    if (!channels[i] || !channels[i]->keeps_contents()) continue;
    for (size_t o = 0; o < channels_.size(); ++o)
      if (channels_[o]->keeps_contents() && config_.channels[o].name != next.channels[i].name &&
          share_storage(*channels_[o], *channels[i])) {
        spdlog::error(
            "reload refused: channel {} would open the directories channel {} uses ({}); the running configuration "
            "stays (give the new channel directories of its own, or move them in two reloads, or restart)",
            next.channels[i].name, config_.channels[o].name, channels_[o]->storage());
        finish_reload(ReloadOutcome::refused);
        return ReloadOutcome::refused;
      }
  }

  // Listening sockets (listener_pool.h): a port a source that goes listens on is handed to the
  // new source that listens on it, never closed in between; the new sources' other ports are
  // bound now, so that one another program holds refuses the reload before anything stops.
  const std::shared_ptr<ListenerPool> listeners = shared_.get<ListenerPool>();
  {
    std::set<std::string> held;
    std::set<uint16_t> freed;
    for (size_t i = 0; i < sources_.size(); ++i) {
      if (keep_source[i]) continue;
      for (const std::string& key : sources_[i]->listener_keys()) held.insert(key);
      for (const uint16_t port : sources_[i]->listening_ports()) freed.insert(port);
    }
    std::set<std::string> handed_over;
    for (const auto& source : sources)
      if (source)
        for (const std::string& key : source->listener_keys())
          if (held.count(key)) {
            listeners->expect(key);
            handed_over.insert(key);
          }
    try {
      for (const auto& source : sources)
        if (source) source->reserve_listeners(handed_over, freed);
    } catch (const config::ConfigError& e) {
      listeners->settle();
      spdlog::error("reload refused: {}; the running configuration stays", e.what());
      finish_reload(ReloadOutcome::refused);
      return ReloadOutcome::refused;
    }
  }

  // Bounded well under systemd's watchdog and stop timeouts (the caller feeds the watchdog): what
  // cannot be drained by then moves over, or drains in the background.
  const Deadline deadline = Clock::now() + std::min(drain, kReloadDrainMax);
  bool failed = false;
  // 1. The sources that stay read their credentials again, as SIGHUP always had them do; those
  //    that go let go of their ports and drain as at shutdown, but with no deadline of their own:
  //    one that a full channel holds past the reload's drain time goes on in the background
  //    (retiring_) rather than drop what it read. What they read is in their (old) channels.
  std::vector<bool> source_retiring(sources_.size());
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (keep_source[i])
      sources_[i]->reload_credentials();
    else if (sources_[i]->retire(deadline))
      source_retiring[i] = true;
    else
      sources_[i]->stop(deadline);
  }
  for (size_t i = 0; i < sources_.size(); ++i)
    if (source_retiring[i] && sources_[i]->wait_retired(deadline)) {
      sources_[i]->stop(deadline);  // done: its threads end at once
      source_retiring[i] = false;
    }
  // The channels a source still draining in the background feeds (one this reload retires, or
  // an earlier one did): they stay open for it.
  std::set<const Channel*> fed_by_retiring;
  for (const RetiringSource& r : retiring_) fed_by_retiring.insert(r.channels.begin(), r.channels.end());
  for (size_t i = 0; i < sources_.size(); ++i)
    if (source_retiring[i]) {
      spdlog::warn(
          "reload: source {} is still draining (a full channel or open connections); it goes on in the "
          "background",
          config_.sources[i].name);
      for (const std::string& name : config_.sources[i].channels)
        fed_by_retiring.insert(
            channels_[static_cast<size_t>(component_named(config_.channels, name) - config_.channels.data())].get());
    }

  // 2. Channels that go: their sinks drain them into Kafka until the deadline (a removed one's
  //    keep doing so in the background). The objects stay in the member vectors, which the
  //    metrics endpoint reads, until the swap below.
  struct Replaced {
    Channel* old;
    size_t old_index;   // into channels_
    size_t successor;   // into `channels`
    bool same_storage;  // a disk channel whose successor uses its directories: it recovers them
  };
  std::vector<Replaced> replaced;
  std::vector<size_t> removed;                    // indices into channels_ of the channels that go for good
  std::vector<bool> sink_retires(sinks_.size());  // drains a removed channel in the background
  std::vector<Sink*> draining;
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (keep_channel[i]) continue;
    const config::ComponentConfig* successor = plan.successor[i] ? &next.channels[*plan.successor[i]] : nullptr;
    for (size_t k = 0; k < sinks_.size(); ++k)
      if (config_.sinks[k].channels.front() == config_.channels[i].name) {
        if (successor) draining.push_back(sinks_[k].get());
        sink_retires[k] = !successor;
      }
    if (!successor) {
      spdlog::info("reload: channel {} was removed; its sinks drain it ({} events) before it closes",
                   config_.channels[i].name, channels_[i]->counters().events_held);
      removed.push_back(i);
      continue;
    }
    const size_t s = static_cast<size_t>(successor - next.channels.data());
    replaced.push_back({channels_[i].get(), i, s, share_storage(*channels_[i], *channels[s])});
    // Its successor opens on the same directories only once it is closed: nothing may still put.
    if (replaced.back().same_storage && fed_by_retiring.count(channels_[i].get())) {
      const auto stop_now = [&](Source& source) {
        spdlog::warn("reload: source {} stops now: its channel {} is reopened on the same directories", source.name(),
                     config_.channels[i].name);
        source.stop(Clock::now());
      };
      for (size_t k = 0; k < sources_.size(); ++k)
        if (source_retiring[k] && std::count(config_.sources[k].channels.begin(), config_.sources[k].channels.end(),
                                             config_.channels[i].name)) {
          stop_now(*sources_[k]);
          source_retiring[k] = false;
        }
      for (RetiringSource& r : retiring_)  // settle_retired() counts them and lets them go
        if (std::count(r.channels.begin(), r.channels.end(), channels_[i].get())) {
          stop_now(*r.source);
          std::erase(r.channels, channels_[i].get());  // closed and freed by this reload
        }
    }
  }
  for (Sink* sink : draining) sink->request_stop(deadline);  // side by side
  for (Sink* sink : draining) {
    sink->stop(deadline);
    depart(*sink);
  }
  // A disk channel is closed before its successor on the same directories opens (they are
  // locked while open); what it could not write to disk is lost, and counted.
  for (const Replaced& r : replaced)
    if (r.same_storage) {
      r.old->close();
      const ChannelCounters c = r.old->counters();
      departed_.lost += c.events_held - c.events_on_disk;
      if (c.events_on_disk)
        spdlog::info("reload: channel {}: {} events kept on disk for its successor, which replays them", r.old->name(),
                     c.events_on_disk);
    }

  // 3. New channels open. What a replaced channel still holds moves into its successor, in order,
  //    as far as the successor has room — a disk channel's events too, into its successor on other
  //    directories, which the new configuration reads after a restart (the old ones it would not);
  //    the rest stays in the old channel, drained in the background by sinks of its old settings
  //    (settle_retired), and at a shutdown moves over then.
  std::vector<bool> opened(channels.size());
  for (size_t i = 0; i < channels.size(); ++i) {
    if (!channels[i]) continue;
    try {
      // Its own drain time: the reload's has usually passed by now, in the outage this is for.
      if (channels[i]->keeps_contents()) release_storage_for(*channels[i], Clock::now() + kReloadDrainMax / 2);
      channels[i]->open();
      opened[i] = true;
    } catch (const config::ConfigError& e) {
      spdlog::error("reload: channel {} cannot open: {}; it is left out, with its sources and sinks",
                    next.channels[i].name, e.what());
      failed = true;
    }
  }
  std::vector<size_t> kept_draining;  // replaced channels that still hold events: into retired_
  for (const Replaced& r : replaced) {
    if (r.same_storage) {
      depart(*r.old);
      continue;
    }
    Channel* successor = opened[r.successor] ? channels[r.successor].get() : nullptr;
    const uint64_t moved = successor ? move_events(*r.old, *successor) : 0;
    if (moved)
      spdlog::info("reload: channel {}: {} events not yet sent moved into its successor", r.old->name(), moved);
    if (const uint64_t left = r.old->counters().events_held) {
      spdlog::warn("reload: channel {}: {} events stay in it, drained in the background by sinks of its old settings",
                   r.old->name(), left);
      kept_draining.push_back(r.old_index);
    } else if (fed_by_retiring.count(r.old)) {
      kept_draining.push_back(r.old_index);  // open, with its old sinks, for the source still putting into it
    } else {
      r.old->close();
      depart(*r.old);
    }
  }
  // The sinks of the old settings for what stays: built and started now (they were validated once).
  std::vector<Retired> drain_in_background;
  for (size_t i : kept_draining) {
    Retired r{nullptr, {}};
    for (const config::ComponentConfig& c : config_.sinks) {
      if (c.channels.front() != config_.channels[i].name) continue;
      try {
        // Alone, not in its group: it only drains this channel, whatever became of the others.
        std::unique_ptr<Sink> sink = find_component(c).make_sink(c, *channels_[i], context);
        sink->start();
        r.sinks.push_back(std::move(sink));
      } catch (const std::exception& e) {
        spdlog::error("reload: channel {}: sink {} of its old settings cannot start: {}", config_.channels[i].name,
                      c.name, e.what());
        failed = true;
      }
    }
    drain_in_background.push_back(std::move(r));
  }

  // 4. New sinks start; a sink that cannot (its producer refused) is left out, and where it
  //    replaced one on a channel that stays, that one goes on as it was. Then the sinks replaced on
  //    channels that stay stop taking and settle, side by side.
  config::AgentConfig applied = next;
  const auto index_of = [&](const std::string& channel) {
    return static_cast<size_t>(component_named(next.channels, channel) - next.channels.data());
  };
  // The running sink of next's sink `i`'s name stays, with its settings, if its channel stays.
  const auto keep_previous = [&](size_t i) {
    const std::string& channel = next.sinks[i].channels.front();
    for (size_t o = 0; o < config_.sinks.size(); ++o)
      if (config_.sinks[o].name == next.sinks[i].name && kept_channels.count(config_.sinks[o].channels.front()) &&
          config_.sinks[o].channels.front() == channel) {
        keep_sink[o] = true;
        applied.sinks[i] = config_.sinks[o];
        spdlog::warn("reload: sink {} goes on with its previous settings", next.sinks[i].name);
      }
  };
  std::set<std::string> not_started;
  for (size_t i = 0; i < sinks.size(); ++i) {
    if (!sinks[i]) continue;
    const std::string& channel = next.sinks[i].channels.front();
    try {
      if (!kept_channels.count(channel) && !opened[index_of(channel)])
        throw config::ConfigError("its channel did not open");
      sinks[i]->start();
    } catch (const std::exception& e) {
      spdlog::error("reload: sink {} did not start: {}", next.sinks[i].name, e.what());
      sinks[i].reset();
      failed = true;
      not_started.insert(next.sinks[i].name);
      keep_previous(i);
    }
  }
  // A rebuilt sink group one of whose new sinks did not start keeps its previous settings whole:
  // its other new sinks stop again, its running ones go on in the group they ran in.
  for (const config::ComponentConfig& g : next.sinkgroups) {
    if (!groups.count(g.name) ||
        std::none_of(g.channels.begin(), g.channels.end(), [&](const auto& s) { return not_started.count(s) > 0; }))
      continue;
    spdlog::warn("reload: sink group {} keeps its previous settings: one of its new sinks did not start", g.name);
    for (const std::string& member : g.channels) {
      const auto i = static_cast<size_t>(component_named(next.sinks, member) - next.sinks.data());
      if (!sinks[i]) continue;  // did not start: kept above, if it can be
      sinks[i]->stop(Clock::now());
      depart(*sinks[i]);
      sinks[i].reset();
      keep_previous(i);
    }
    groups.erase(g.name);
    const auto in_applied = std::find_if(applied.sinkgroups.begin(), applied.sinkgroups.end(),
                                         [&](const config::ComponentConfig& c) { return c.name == g.name; });
    const config::ComponentConfig* before = component_named(config_.sinkgroups, g.name);
    if (!before) {
      applied.sinkgroups.erase(in_applied);
      continue;
    }
    *in_applied = *before;
    // A member of the group as it ran that is not running any more is never chosen.
    for (size_t m = 0; m < before->channels.size(); ++m) {
      const config::ComponentConfig* old = component_named(config_.sinks, before->channels[m]);
      if (sink_groups_[g.name] && (!old || !keep_sink[static_cast<size_t>(old - config_.sinks.data())]))
        sink_groups_[g.name]->leave(m);
    }
  }
  std::vector<Sink*> retiring;
  for (size_t k = 0; k < sinks_.size(); ++k)
    if (!keep_sink[k] && kept_channels.count(config_.sinks[k].channels.front())) retiring.push_back(sinks_[k].get());
  for (Sink* sink : retiring) sink->retire(deadline);
  for (Sink* sink : retiring) {
    sink->stop(deadline);
    depart(*sink);
  }

  // 5. New sources start, on the sockets handed over or bound for them; what no source adopted
  //    (its successor did not start) closes as at a shutdown.
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i]) continue;
    try {
      for (const std::string& channel : next.sources[i].channels)
        if (!kept_channels.count(channel) && !opened[index_of(channel)])
          throw config::ConfigError("a channel it fills did not open");
      sources[i]->start();
    } catch (const std::exception& e) {  // a port taken by another program, say
      spdlog::error("reload: source {} did not start: {}; it is left out until a reload that works",
                    next.sources[i].name, e.what());
      sources[i].reset();
      failed = true;
    }
  }
  listeners->settle();

  // 6. The new set replaces the old one (under the lock the metrics endpoint takes); what was
  //    kept moves across, what stopped is counted and freed: sources first, then sinks, then the
  //    channels they used.
  {
    std::unique_lock lock(components_mutex_);
    for (size_t i = 0; i < next.channels.size(); ++i) {
      if (channels[i] && !opened[i]) channels[i].reset();  // did not open: left out
      if (!channels[i])
        for (size_t o = 0; o < config_.channels.size(); ++o)
          if (keep_channel[o] && config_.channels[o].name == next.channels[i].name)
            channels[i] = std::move(channels_[o]);
    }
    for (size_t i = 0; i < next.sinks.size(); ++i)
      if (!sinks[i])
        for (size_t o = 0; o < config_.sinks.size(); ++o)
          if (keep_sink[o] && config_.sinks[o].name == next.sinks[i].name) sinks[i] = std::move(sinks_[o]);
    for (size_t i = 0; i < next.sources.size(); ++i)
      if (!sources[i])
        for (size_t o = 0; o < config_.sources.size(); ++o)
          if (keep_source[o] && config_.sources[o].name == next.sources[i].name) sources[i] = std::move(sources_[o]);
    for (size_t o = 0; o < sources_.size(); ++o) {
      if (!sources_[o]) continue;
      if (!source_retiring[o]) {
        depart(*sources_[o]);
        continue;
      }
      RetiringSource r{std::move(sources_[o]), {}};
      for (const std::string& name : config_.sources[o].channels)
        for (size_t c = 0; c < config_.channels.size(); ++c)
          if (config_.channels[c].name == name)
            r.channels.push_back(channels_[c] ? channels_[c].get() : channels[index_of(name)].get());
      retiring_.push_back(std::move(r));
    }
    // Removed channels, and replaced ones that still hold events, go on draining out of sight of
    // the metrics.
    for (size_t i : removed) {
      Retired r{std::move(channels_[i]), {}};
      for (size_t k = 0; k < sinks_.size(); ++k)
        if (sink_retires[k] && config_.sinks[k].channels.front() == config_.channels[i].name)
          r.sinks.push_back(std::move(sinks_[k]));
      retired_.push_back(std::move(r));
    }
    for (size_t j = 0; j < kept_draining.size(); ++j) {
      drain_in_background[j].channel = std::move(channels_[kept_draining[j]]);
      retired_.push_back(std::move(drain_in_background[j]));
    }
    // What failed to start is left out of the configuration too: the next reload tries it again.
    const auto drop_missing = [](auto& objects, std::vector<config::ComponentConfig>& configs) {
      for (size_t i = objects.size(); i-- > 0;)
        if (!objects[i]) {
          objects.erase(objects.begin() + static_cast<std::ptrdiff_t>(i));
          configs.erase(configs.begin() + static_cast<std::ptrdiff_t>(i));
        }
    };
    drop_missing(channels, applied.channels);
    drop_missing(sinks, applied.sinks);
    drop_missing(sources, applied.sources);
    sources_ = std::move(sources);
    sinks_ = std::move(sinks);
    channels_ = std::move(channels);
    config_ = std::move(applied);
    // A group's sinks were all rebuilt (it has a new object) or all kept (it keeps its own). A
    // group replaced or removed is dissolved: its sinks still running (draining a removed channel)
    // take alone.
    SinkGroups running_groups;
    for (const config::ComponentConfig& g : config_.sinkgroups)
      running_groups[g.name] = groups.count(g.name) ? groups[g.name] : sink_groups_[g.name];
    for (const auto& [name, group] : sink_groups_)
      if (group && (!running_groups.count(name) || running_groups[name] != group)) group->dissolve();
    sink_groups_ = std::move(running_groups);
  }
  const ReloadOutcome outcome = failed ? ReloadOutcome::failed : ReloadOutcome::applied;
  finish_reload(outcome);
  return outcome;
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
