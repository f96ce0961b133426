#include "agent/agent.h"

#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>

#include "agent/component_registry.h"
#include "agent/source_interceptors.h"
#include "agent/source_selector.h"

namespace sluice {

std::unique_ptr<Source> make_source(const config::ComponentConfig& component, std::vector<Channel*> channels,
                                    BuildContext& context) {
  const ComponentSpec& spec = find_component(component);
  config::ComponentConfig own = component;  // without its interceptors' and selector's keys, which are theirs
  context.interceptors = take_interceptors(own);
  context.selector = take_selector(own);
  std::unique_ptr<Source> source = spec.make_source(own, std::move(channels), context);
  source->use_listener_pool(context.shared.get<ListenerPool>());
  context.interceptors.reset();
  context.selector.reset();
  return source;
}

std::unique_ptr<Sink> make_sink(const config::AgentConfig& config, const config::ComponentConfig& component,
                                Channel& channel, BuildContext& context, SinkGroups& groups) {
  context.sink_group = {};
  for (const config::ComponentConfig& g : config.sinkgroups) {
    const auto member = std::find(g.channels.begin(), g.channels.end(), component.name);
    if (member == g.channels.end()) continue;
    auto [it, made] = groups.try_emplace(g.name);
    if (made) it->second = find_component(g).make_sink_group(g);
    if (it->second) context.sink_group = SinkGroupMember(it->second, static_cast<size_t>(member - g.channels.begin()));
  }
  std::unique_ptr<Sink> sink = find_component(component).make_sink(component, channel, context);
  context.sink_group = {};
  return sink;
}

Agent::Agent(const config::AgentConfig& config) : config_(config) {
  std::map<std::string, Channel*> by_name;
  for (const config::ComponentConfig& c : config.channels) {
    channels_.push_back(find_component(c).make_channel(c));
    by_name[c.name] = channels_.back().get();
  }
  BuildContext context{shared_};
  for (const config::ComponentConfig& c : config.sinks)
    sinks_.push_back(make_sink(config, c, *by_name.at(c.channels.front()), context, sink_groups_));
  for (const config::ComponentConfig& g : config.sinkgroups)  // one without a sink to make it is still checked
    if (!sink_groups_.count(g.name)) sink_groups_[g.name] = find_component(g).make_sink_group(g);
  for (const config::ComponentConfig& c : config.sources) {
    std::vector<Channel*> targets;
    for (const std::string& name : c.channels) targets.push_back(by_name.at(name));
    sources_.push_back(make_source(c, std::move(targets), context));
    if (const std::string_view property = sources_.back()->needs_delivered_commits(); !property.empty())
      check_delivered_commits(config, c, property);
  }
}

// A source that answers its senders once its events are committed (RELP, ackAfter = kafka)
// would answer too early through a sink that commits before delivery (acks = 0, the null
// sink), and never through a channel no sink drains: refused at start.
void Agent::check_delivered_commits(const config::AgentConfig& config, const config::ComponentConfig& source,
                                    std::string_view property) const {
  // Only a required channel's commits are waited for (an optional one's answer nobody).
  config::ComponentConfig own = source;
  const std::shared_ptr<const ChannelSelector> selector = take_selector(own);
  std::set<std::string> required;
  for (const ChannelRoute& route : selector->routes())
    for (const size_t channel : route.required) required.insert(source.channels[channel]);
  for (const std::string& channel : required) {
    bool drained = false;
    for (size_t i = 0; i < config.sinks.size(); ++i) {
      if (config.sinks[i].channels.front() != channel) continue;
      drained = true;
      if (!sinks_[i]->commits_after_delivery())
        source.fail(property, "answers senders once events are delivered, but sink '" + config.sinks[i].name +
                                  "' on channel '" + channel +
                                  "' commits without Kafka's acknowledgement (acks = 0, or no Kafka): give it acks = "
                                  "1 or all, or use a file channel and ackAfter = channel");
    }
    if (!drained) source.fail(property, "needs a sink on channel '" + channel + "': nothing would be answered");
  }
}

Agent::~Agent() {
  if (running_) {
    stop(std::chrono::milliseconds(0));
    return;
  }
  // Not running: stopped already (its sinks hold no producer any more), never started (the reload's
  // check of a candidate, --check), or a start that failed half way: the sinks it started stop as
  // they are destroyed, and what they share winds down with them, not after.
  for (auto& sink : sinks_) sink->agent_stopping(Clock::now());
}

void Agent::start() {
  for (auto& channel : channels_) channel->open();
  for (auto& sink : sinks_) sink->start();
  running_ = true;
  for (auto& source : sources_) source->start();
  last_success_seconds_ = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

uint64_t Agent::stop(std::chrono::milliseconds timeout) {
  if (!running_) return 0;
  running_ = false;
  const Deadline deadline = Clock::now() + timeout;
  spdlog::info("stopping: sources first, then draining {} channel(s) into {} sink(s) (deadline {} ms)",
               channels_.size(), sinks_.size(), timeout.count());
  // Channels and sinks a reload removed drain with the others (their sinks still run).
  std::vector<Sink*> all_sinks;
  std::vector<Channel*> all_channels;
  for (auto& sink : sinks_) all_sinks.push_back(sink.get());
  for (auto& channel : channels_) all_channels.push_back(channel.get());
  for (Retired& r : retired_) {
    all_channels.push_back(r.channel.get());
    for (auto& sink : r.sinks) all_sinks.push_back(sink.get());
  }
  // Before the sources' stop, which may itself last until the deadline (channels that stay full).
  for (Sink* sink : all_sinks) sink->agent_stopping(deadline);
  // Counted from what reloads stopped before, then from what stops now (sources a reload
  // retired that still drain included: now they have a deadline).
  SourceCounters sources = departed_.sources;
  std::vector<Source*> all_sources;
  for (RetiringSource& r : retiring_) all_sources.push_back(r.source.get());
  for (auto& source : sources_) all_sources.push_back(source.get());
  for (Source* source : all_sources) source->request_stop(deadline);  // all drain at once
  for (Source* source : all_sources) {
    source->stop(deadline);
    sources += source->counters();
  }
  for (Sink* sink : all_sinks) sink->request_stop(deadline);  // all drain at once
  for (Sink* sink : all_sinks) sink->stop(deadline);
  hand_over_retired_disk_channels();
  ChannelCounters channels = departed_.channels;
  uint64_t in_channels = departed_.lost;
  for (Channel* channel : all_channels) {
    channel->close();
    const ChannelCounters c = channel->counters();
    channels += c;
    if (c.events_on_disk)
      spdlog::info("channel {}: {} events kept on disk for the next start", channel->name(), c.events_on_disk);
    if (const uint64_t gone = c.events_held - c.events_on_disk) {
      spdlog::error("channel {}: {} events were still in the channel at exit and are lost", channel->name(), gone);
      in_channels += gone;
    }
  }
  SinkCounters sinks = departed_.sinks;
  for (const Sink* sink : all_sinks) sinks += sink->counters();
  // The books balance: put + replayed = sent + discarded + lost in channels + kept on disk +
  // unreadable on disk; read = filtered + unrouted + put + never put + refused (per channel a
  // source's selector chose, less the optional copies dropped). Events a reload
  // moved from a channel into its successor are counted as put once.
  const AgentTotals t = totals();
  const uint64_t lost = in_channels + sources.events_dropped_at_shutdown;
  spdlog::info(
      "stopped: {} events read, {} filtered by interceptors, {} routed to no channel, {} optional copies dropped, {} "
      "events in, {} replayed from disk, {} sent ({} lost after hand-over, {} possibly lost), {} discarded, {} failed, {} lost at shutdown ({} in channels, {} never put), {} kept on disk, {} unreadable "
      "on disk, {} possibly duplicated, {} bytes left unread, {} frames cut, {} connections cut, {} refused (kept by "
      "their senders)",
      sources.events_received, sources.events_filtered, sources.events_unrouted, sources.optional_copies_dropped,
      t.events_in, channels.events_recovered, t.events_out, sinks.events_lost_after_handover,
      sinks.events_possibly_lost, sinks.events_discarded, t.events_failed, lost, in_channels,
      sources.events_dropped_at_shutdown, channels.events_on_disk, channels.events_unreadable,
      sinks.events_possibly_duplicated, sources.bytes_unread_at_shutdown, sources.frames_cut,
      sources.connections_cut_at_shutdown, sources.events_refused);
  return lost;
}

std::string Agent::ready_info() const {
  std::ostringstream out;
  for (const auto& source : sources_) {
    const std::vector<uint16_t> ports = source->listening_ports();
    if (ports.empty()) continue;
    out << "source." << source->name() << ".ports=";
    for (size_t i = 0; i < ports.size(); ++i) out << (i ? " " : "") << ports[i];
    out << "\n";
  }
  std::set<std::string> sink_lines;  // sinks sharing one embedded cluster say so once
  for (const auto& sink : sinks_) sink_lines.insert(sink->ready_info());
  for (const std::string& lines : sink_lines) out << lines;
  out << "pid=" << getpid() << "\n";
  return out.str();
}

namespace {

std::string mebibytes(uint64_t bytes) {
  if (bytes == memory::kUnbounded) return "no bound";
  return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

std::string MemoryBound::describe() const {
  return fmt::format("{} (base {}, sources {}, channels {}, sinks {}; with a quarter more for the allocator)",
                     mebibytes(total), mebibytes(base), mebibytes(sources), mebibytes(channels), mebibytes(sinks));
}

MemoryBound Agent::memory_bound() const {
  using namespace memory;
  MemoryBound b;
  b.base = kBaseBytes;
  for (const auto& source : sources_) b.sources = add(b.sources, source->memory_bound());
  for (size_t c = 0; c < channels_.size(); ++c) {
    Context context;
    context.event_headers.emplace();
    for (size_t s = 0; s < sources_.size(); ++s)
      for (const std::string& name : config_.sources[s].channels)
        if (name == config_.channels[c].name) {
          context.max_event_bytes = std::max(context.max_event_bytes, sources_[s]->max_event_bytes());
          context.max_batch_bytes = std::max(context.max_batch_bytes, sources_[s]->max_batch_bytes());
          const std::optional<std::vector<std::string>> made = sources_[s]->headers_made();
          if (!made) context.event_headers.reset();
          if (made && context.event_headers)
            context.event_headers->insert(context.event_headers->end(), made->begin(), made->end());
        }
    for (size_t k = 0; k < sinks_.size(); ++k)
      if (config_.sinks[k].channels.front() == config_.channels[c].name)
        context.takes_in_flight += sinks_[k]->takes_in_flight();
    b.channels = add(b.channels, channels_[c]->memory_bound(context));
    context.channel_capacity = channels_[c]->capacity();
    for (size_t k = 0; k < sinks_.size(); ++k)
      if (config_.sinks[k].channels.front() == config_.channels[c].name)
        b.sinks = add(b.sinks, sinks_[k]->memory_bound(context));
  }
  b.total = add(b.base, with_allocator_slack(add(add(b.sources, b.channels), b.sinks)));
  return b;
}

AgentTotals Agent::totals() const {
  const auto lock = lock_components();
  AgentTotals t;
  // What stopped at reloads, so that the totals never go back.
  t.events_in = departed_.channels.events_put - departed_.moved;
  t.put_blocked = departed_.channels.put_blocked;
  t.events_out = departed_.sinks.events_sent;
  t.events_failed = departed_.sinks.events_failed;
  const auto add_channel = [&](const Channel& channel) {
    const ChannelCounters c = channel.counters();
    t.events_in += c.events_put;
    t.channel_held += c.events_held;
    t.channel_capacity += channel.capacity();
    t.put_blocked += c.put_blocked;
  };
  const auto add_sink = [&](const Sink& sink) {
    const SinkCounters c = sink.counters();
    t.events_out += c.events_sent;
    t.events_failed += c.events_failed;
    t.sinks_queued += c.events_queued;
  };
  for (const auto& channel : channels_) add_channel(*channel);
  for (const auto& sink : sinks_) add_sink(*sink);
  for (const Retired& r : retired_) {
    add_channel(*r.channel);
    for (const auto& sink : r.sinks) add_sink(*sink);
  }
  return t;
}

}  // namespace sluice
