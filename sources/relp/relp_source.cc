#include "sources/relp/relp_source.h"

#include "agent/api/channel.h"
#include "sources/net/answered_channels.h"
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
  net::check_answered_channels(
      component, channels, context.selector.get(), c.relp.ack_after == AckAfter::channel, c.tcp.batch_size,
      "RELP answers an event once a required channel holds it, and a copy an optional channel drops would be "
      "answered too; make one of them required (Flume's selector.optional lists the optional ones; a multiplexing "
      "selector's selector.mapping.* and selector.default are required)");
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
