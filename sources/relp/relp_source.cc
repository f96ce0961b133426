#include "sources/relp/relp_source.h"

#include "agent/api/channel.h"
#include "sources/net/stream_server.h"

namespace sluice::relp {
namespace {

std::vector<config::PropertyDoc> describe_relp() {
  std::vector<config::PropertyDoc> docs = config::describe(kRelpProperties);
  for (config::PropertyDoc& doc : config::describe(relp_stream_properties())) docs.push_back(std::move(doc));
  return docs;
}

std::unique_ptr<Source> make_relp_source(const config::ComponentConfig& component, std::vector<Channel*> channels,
                                         BuildContext& context) {
  RelpSourceConfig c = parse_relp_source_config(component);
  std::vector<bool> required(channels.size(), context.selector == nullptr);
  if (context.selector)
    for (const ChannelRoute& route : context.selector->routes()) {
      for (const size_t channel : route.required) required[channel] = true;
      // RELP answers an event once its route's required channels hold it: a route with optional
      // channels only would be answered at once, even when its copy was dropped (a full channel).
      if (route.required.empty() && !route.optional.empty()) {
        std::string names;
        for (const size_t channel : route.optional) names += (names.empty() ? "" : ", ") + channels[channel]->name();
        component.fail("selector",
                       "routes some events to optional channels only (" + names +
                           "): RELP answers an event once a required channel holds it, and a copy an optional "
                           "channel drops would be answered too; make one of them required (Flume's selector.optional "
                           "lists the optional ones; a multiplexing selector's selector.mapping.* and "
                           "selector.default are required)");
      }
    }
  for (size_t i = 0; i < channels.size(); ++i) {
    const Channel* channel = channels[i];
    batch_size_for(component, "batchSize", c.tcp.batch_size, *channel);
    // An optional channel's puts are answered by nothing: it may keep them in memory.
    if (c.relp.ack_after == AckAfter::channel && required[i] && !channel->puts_reach_disk())
      component.fail("ackAfter", "= channel needs channels that write every put to disk, and channel '" +
                                     channel->name() +
                                     "' keeps puts in memory: use a file channel, or ackAfter = kafka");
  }
  if (channels.size() > 255) component.fail("channels", "more than 255 channels cannot all be waited for");
  const RelpSettings settings{.max_data_size = static_cast<size_t>(c.relp.max_data_size.bytes),
                              .event_size = c.tcp.event_size};
  auto events = syslog::syslog_format(c.tcp);
  return std::make_unique<net::StreamServer>(component, std::move(c.tcp), std::move(channels), context.selector,
                                             std::make_unique<RelpProtocolFactory>(settings, c.relp.ack_after),
                                             std::move(events), context.interceptors);
}

}  // namespace

const ComponentSpec kRelpSourceSpec{
    .kind = config::Kind::source,
    .type = "relp",
    .aliases = {},
    .doc =
        "RELP (rsyslog's omrelp, librelp clients) on one or more TCP ports; each message is answered only once "
        "it is delivered by every channel's sink (ackAfter = kafka) or on a file channel's disk (ackAfter = "
        "channel), so a sender's queue keeps what the agent does not have yet. Optionally over TLS (ssl = true).",
    .describe = &describe_relp,
    .make_source = &make_relp_source,
};

}  // namespace sluice::relp
