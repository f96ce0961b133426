// Agent::reload: a new configuration applied to the running agent, what changed and only that.

#include <algorithm>
#include <mutex>
#include <set>

#include <spdlog/spdlog.h>

#include "agent/agent.h"
#include "agent/component_registry.h"

namespace sluice {
namespace {

// Same type, same channels, same properties with the same values (where they were written in
// the file does not matter: a comment added above them changes nothing).
bool same_settings(const config::ComponentConfig& a, const config::ComponentConfig& b) {
  if (a.type != b.type || a.channels != b.channels || a.properties.size() != b.properties.size()) return false;
  return std::equal(a.properties.begin(), a.properties.end(), b.properties.begin(), [](const auto& x, const auto& y) {
    return x.first == y.first && x.second.value == y.second.value;
  });
}

const config::ComponentConfig* named(const std::vector<config::ComponentConfig>& list, const std::string& name) {
  const auto it = std::find_if(list.begin(), list.end(), [&](const auto& c) { return c.name == name; });
  return it == list.end() ? nullptr : &*it;
}

void add(SourceCounters& to, const SourceCounters& c) {
  to.events_received += c.events_received;
  to.bytes_received += c.bytes_received;
  to.frames_cut += c.frames_cut;
  to.events_dropped_at_shutdown += c.events_dropped_at_shutdown;
  to.bytes_unread_at_shutdown += c.bytes_unread_at_shutdown;
}

// The names in `list` whose flag is set, for the log line.
std::string names_of(const std::vector<config::ComponentConfig>& list, const std::vector<bool>& flags, bool wanted) {
  std::string out;
  for (size_t i = 0; i < list.size(); ++i)
    if (flags[i] == wanted) out += (out.empty() ? "" : " ") + list[i].name;
  return out.empty() ? "-" : out;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

void Agent::depart(const Source& source) { add(departed_.sources, source.counters()); }

void Agent::depart(const Channel& channel) {
  const ChannelCounters c = channel.counters();
  ChannelCounters& to = departed_.channels;
  to.events_put += c.events_put;
  to.events_taken += c.events_taken;
  to.events_committed += c.events_committed;
  to.events_rolled_back += c.events_rolled_back;
  to.put_blocked += c.put_blocked;
  to.events_on_disk += c.events_on_disk;
  to.events_recovered += c.events_recovered;
  to.events_unreadable += c.events_unreadable;
}

void Agent::depart(const Sink& sink) {
  const SinkCounters c = sink.counters();
  SinkCounters& to = departed_.sinks;
  to.events_taken += c.events_taken;
  to.events_sent += c.events_sent;
  to.events_failed += c.events_failed;
  to.events_discarded += c.events_discarded;
  to.events_rolled_back += c.events_rolled_back;
  to.events_possibly_duplicated += c.events_possibly_duplicated;
  to.events_lost_after_handover += c.events_lost_after_handover;
}

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

  // What stays as it runs: same settings, and (sinks, sources) every channel it uses stays too.
  std::vector<bool> keep_channel(config_.channels.size()), keep_sink(config_.sinks.size()),
      keep_source(config_.sources.size());
  std::map<std::string, Channel*> kept_channels;
  for (size_t i = 0; i < config_.channels.size(); ++i) {
    const config::ComponentConfig* n = named(next.channels, config_.channels[i].name);
    keep_channel[i] = n && same_settings(config_.channels[i], *n);
    if (keep_channel[i]) kept_channels[n->name] = channels_[i].get();
  }
  const auto channels_kept = [&](const config::ComponentConfig& c) {
    return std::all_of(c.channels.begin(), c.channels.end(),
                       [&](const auto& name) { return kept_channels.count(name); });
  };
  for (size_t i = 0; i < config_.sinks.size(); ++i) {
    const config::ComponentConfig* n = named(next.sinks, config_.sinks[i].name);
    keep_sink[i] = n && same_settings(config_.sinks[i], *n) && channels_kept(*n);
  }
  for (size_t i = 0; i < config_.sources.size(); ++i) {
    const config::ComponentConfig* n = named(next.sources, config_.sources[i].name);
    keep_source[i] = n && same_settings(config_.sources[i], *n) && channels_kept(*n);
  }
  const auto all = [](const std::vector<bool>& v) { return std::all_of(v.begin(), v.end(), [](bool b) { return b; }); };
  if (all(keep_channel) && all(keep_sink) && all(keep_source) && next.channels.size() == config_.channels.size() &&
      next.sinks.size() == config_.sinks.size() && next.sources.size() == config_.sources.size()) {
    spdlog::info("reload: the configuration is unchanged; sources read their credentials again");
    reload_credentials();
    finish_reload(ReloadOutcome::unchanged);
    return ReloadOutcome::unchanged;
  }
  spdlog::info(
      "reload: keeping sources [{}] channels [{}] sinks [{}]; stopping sources [{}] channels [{}] sinks [{}] "
      "(changed or removed)",
      names_of(config_.sources, keep_source, true), names_of(config_.channels, keep_channel, true),
      names_of(config_.sinks, keep_sink, true), names_of(config_.sources, keep_source, false),
      names_of(config_.channels, keep_channel, false), names_of(config_.sinks, keep_sink, false));

  // Build what is new, in `next`'s order; a component kept is taken over as it is. Nothing new
  // runs yet, nothing old has stopped: a failure here changes nothing.
  std::vector<std::unique_ptr<Channel>> channels(next.channels.size());
  std::vector<std::unique_ptr<Sink>> sinks(next.sinks.size());
  std::vector<std::unique_ptr<Source>> sources(next.sources.size());
  std::map<std::string, Channel*> by_name = kept_channels;
  BuildContext context{shared_};
  try {
    for (size_t i = 0; i < next.channels.size(); ++i) {
      if (kept_channels.count(next.channels[i].name)) continue;
      channels[i] = find_component(next.channels[i]).make_channel(next.channels[i]);
      by_name[next.channels[i].name] = channels[i].get();
    }
    for (size_t i = 0; i < next.sinks.size(); ++i) {
      const config::ComponentConfig* old = named(config_.sinks, next.sinks[i].name);
      if (old && keep_sink[static_cast<size_t>(old - config_.sinks.data())]) continue;
      sinks[i] =
          find_component(next.sinks[i]).make_sink(next.sinks[i], *by_name.at(next.sinks[i].channels.front()), context);
    }
    for (size_t i = 0; i < next.sources.size(); ++i) {
      const config::ComponentConfig* old = named(config_.sources, next.sources[i].name);
      if (old && keep_source[static_cast<size_t>(old - config_.sources.data())]) continue;
      std::vector<Channel*> targets;
      for (const std::string& name : next.sources[i].channels) targets.push_back(by_name.at(name));
      sources[i] = find_component(next.sources[i]).make_source(next.sources[i], std::move(targets), context);
    }
  } catch (const config::ConfigError& e) {
    spdlog::error("reload refused: {}; the running configuration stays", e.what());
    finish_reload(ReloadOutcome::refused);
    return ReloadOutcome::refused;
  }

  const Deadline deadline = Clock::now() + drain;
  bool failed = false;
  // 1. The sources that stay read their credentials again, as SIGHUP always had them do; those
  //    that go stop as at shutdown: what they read is in their (old) channels.
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (keep_source[i])
      sources_[i]->reload_credentials();
    else
      sources_[i]->stop(deadline);
  }

  // 2. Channels that go. A replaced one is drained into Kafka by its sinks first; what is left
  //    (Kafka down) moves into its successor, or stays on disk for it. A removed one keeps its
  //    sinks and drains in the background (settle_retired). (The objects stay in the member
  //    vectors, which the metrics endpoint reads, until the swap below.)
  std::vector<Channel*> replaced;                 // drained, to be closed once successors took the rest
  std::vector<size_t> successor_of;               // index into `channels` of each replaced one's successor
  std::vector<size_t> removed;                    // indices into channels_ of the channels that go for good
  std::vector<bool> sink_retires(sinks_.size());  // drains a removed channel in the background
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (keep_channel[i]) continue;
    const config::ComponentConfig* successor = named(next.channels, config_.channels[i].name);
    std::vector<Sink*> own_sinks;
    for (size_t k = 0; k < sinks_.size(); ++k)
      if (config_.sinks[k].channels.front() == config_.channels[i].name) {
        own_sinks.push_back(sinks_[k].get());
        sink_retires[k] = !successor;
      }
    if (!successor) {
      spdlog::info("reload: channel {} was removed; its {} sink(s) drain it ({} events) before it closes",
                   config_.channels[i].name, own_sinks.size(), channels_[i]->counters().events_held);
      removed.push_back(i);
      continue;
    }
    for (Sink* sink : own_sinks) sink->request_stop(deadline);
    for (Sink* sink : own_sinks) {
      sink->stop(deadline);
      depart(*sink);
    }
    successor_of.push_back(static_cast<size_t>(successor - next.channels.data()));
    replaced.push_back(channels_[i].get());
  }
  // A disk channel is closed before its successor opens (the directory is locked while open).
  for (Channel* channel : replaced)
    if (channel->keeps_contents()) channel->close();

  // 3. New channels open; a replaced memory channel's leftovers move into its successor, in order.
  std::vector<bool> opened(channels.size());
  for (size_t i = 0; i < channels.size(); ++i) {
    if (!channels[i]) continue;
    try {
      channels[i]->open();
      opened[i] = true;
    } catch (const config::ConfigError& e) {
      spdlog::error("reload: channel {} cannot open: {}; it is left out, with its sources and sinks",
                    next.channels[i].name, e.what());
      failed = true;
    }
  }
  for (size_t r = 0; r < replaced.size(); ++r) {
    Channel& old = *replaced[r];
    if (old.keeps_contents()) {
      if (const uint64_t kept = old.counters().events_on_disk)
        spdlog::info("reload: channel {}: {} events kept on disk for its successor (the same directories replay them)",
                     old.name(), kept);
    } else {
      // Nothing drains the successor yet: what does not fit at once will not fit later either.
      Channel* successor = opened[successor_of[r]] ? channels[successor_of[r]].get() : nullptr;
      uint64_t moved = 0, lost = 0;
      for (Take t = old.take(old.transaction_capacity(), Clock::now()); !t.empty();
           t = old.take(old.transaction_capacity(), Clock::now())) {
        for (EventBatch& batch : t.batches) {
          const size_t events = batch.size();
          if (successor && successor->put(batch, Clock::now())) {
            moved += events;
          } else {
            successor = nullptr;  // keeps the order: nothing after a refused batch goes in
            lost += events;
          }
        }
        old.commit(t);
      }
      departed_.moved += moved;
      departed_.lost += lost;
      if (moved) spdlog::info("reload: channel {}: {} events not yet sent moved into its successor", old.name(), moved);
      if (lost) {
        spdlog::error("reload: channel {}: {} events lost: its successor could not take them (smaller, or not open)",
                      old.name(), lost);
        failed = true;
      }
      old.close();
    }
    depart(old);
  }

  // 4. New sinks start; then the sinks replaced on channels that stay stop taking and settle.
  for (size_t i = 0; i < sinks.size(); ++i) {
    const std::string& channel = next.sinks[i].channels.front();
    const bool channel_open = kept_channels.count(channel) ||
                              opened[static_cast<size_t>(named(next.channels, channel) - next.channels.data())];
    if (sinks[i] && channel_open) sinks[i]->start();
    if (sinks[i] && !channel_open) sinks[i].reset();
  }
  for (size_t k = 0; k < sinks_.size(); ++k)
    if (!keep_sink[k] && kept_channels.count(config_.sinks[k].channels.front())) {
      sinks_[k]->retire(deadline);
      depart(*sinks_[k]);
    }

  // 5. New sources start (after the old ones let go of their ports).
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i]) continue;
    bool channels_open = true;
    for (const std::string& channel : next.sources[i].channels)
      channels_open =
          channels_open && (kept_channels.count(channel) ||
                            opened[static_cast<size_t>(named(next.channels, channel) - next.channels.data())]);
    try {
      if (!channels_open) throw config::ConfigError("a channel it fills did not open");
      sources[i]->start();
    } catch (const std::exception& e) {  // a port taken by another program, say
      spdlog::error("reload: source {} did not start: {}; it is left out until a reload that works",
                    next.sources[i].name, e.what());
      sources[i].reset();
      failed = true;
    }
  }

  // 6. The new set replaces the old one (under the lock the metrics endpoint takes); what was
  //    kept moves across, what stopped is counted and freed.
  config::AgentConfig applied = next;
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
    for (size_t o = 0; o < sources_.size(); ++o)
      if (sources_[o]) depart(*sources_[o]);
    // Removed channels and their sinks go on draining, out of sight of the metrics.
    for (size_t i : removed) {
      Retired r{std::move(channels_[i]), {}};
      for (size_t k = 0; k < sinks_.size(); ++k)
        if (sink_retires[k] && config_.sinks[k].channels.front() == config_.channels[i].name)
          r.sinks.push_back(std::move(sinks_[k]));
      retired_.push_back(std::move(r));
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
    channels_ = std::move(channels);
    sinks_ = std::move(sinks);
    sources_ = std::move(sources);
    config_ = std::move(applied);
  }
  const ReloadOutcome outcome = failed ? ReloadOutcome::failed : ReloadOutcome::applied;
  finish_reload(outcome);
  return outcome;
}

void Agent::settle_retired() {
  for (size_t i = retired_.size(); i-- > 0;) {
    Retired& r = retired_[i];
    if (r.channel->counters().events_held != 0) continue;
    for (auto& sink : r.sinks) {
      sink->stop(Clock::now());
      depart(*sink);
    }
    r.channel->close();
    depart(*r.channel);
    spdlog::info("reload: removed channel {} is drained and closed", r.channel->name());
    std::unique_lock lock(components_mutex_);
    retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

}  // namespace sluice
