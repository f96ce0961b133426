#include "sources/avro/avro_source.h"

#include "agent/api/channel.h"
#include "sources/avro/avro_config.h"
#include "sources/avro/avro_format.h"
#include "sources/net/stream_server.h"

namespace sluice::avro {
namespace {

std::vector<config::PropertyDoc> describe_avro() {
  std::vector<config::PropertyDoc> docs = config::describe(kAvroProperties);
  for (config::PropertyDoc& doc : config::describe(avro_stream_properties())) docs.push_back(std::move(doc));
  return docs;
}

// A call is answered once its events' required channels hold them: a route of optional channels
// only would be answered OK for a copy an optional channel dropped.
void check_routes(const config::ComponentConfig& component, const std::vector<Channel*>& channels,
                  const ChannelSelector& selector) {
  for (const ChannelRoute& route : selector.routes()) {
    if (!route.required.empty() || route.optional.empty()) continue;
    std::string names;
    for (const size_t channel : route.optional) names += (names.empty() ? "" : ", ") + channels[channel]->name();
    component.fail("selector", "routes some events to optional channels only (" + names +
                                   "): a call is answered once a required channel holds its events, and a copy an "
                                   "optional channel drops would be answered too; make one of them required");
  }
}

std::unique_ptr<Source> make_avro_source(const config::ComponentConfig& component, std::vector<Channel*> channels,
                                         BuildContext& context) {
  AvroSourceConfig c = parse_avro_source_config(component);
  std::vector<bool> required(channels.size(), context.selector == nullptr);
  if (context.selector) {
    check_routes(component, channels, *context.selector);
    for (const ChannelRoute& route : context.selector->routes())
      for (const size_t channel : route.required) required[channel] = true;
  }
  for (size_t i = 0; i < channels.size(); ++i) {
    batch_size_for(component, "batchSize", c.stream.batch_size, *channels[i]);
    if (c.avro.acknowledge_on_put && required[i] && !channels[i]->puts_reach_disk())
      component.fail("ackAfter", "= channel needs channels that write every put to disk, and channel '" +
                                     channels[i]->name() +
                                     "' keeps puts in memory: use a file channel, or ackAfter = kafka");
  }
  if (channels.size() > 255) component.fail("channels", "more than 255 channels cannot all be waited for");
  const AvroSettings settings = c.settings();
  return std::make_unique<net::StreamServer>(component, std::move(c.stream), std::move(channels), context.selector,
                                             std::make_unique<AvroProtocolFactory>(settings, c.avro.acknowledge_on_put),
                                             std::make_unique<AvroFormatFactory>(settings.max_frame_bytes),
                                             context.interceptors);
}

}  // namespace

const ComponentSpec kAvroSourceSpec{
    .kind = config::Kind::source,
    .type = "avro",
    .aliases = {"org.apache.flume.source.AvroSource"},
    .doc =
        "Flume's Avro RPC (what Flume's Avro sink and flume-ng avro-client send) on one or more TCP ports; "
        "each call is answered OK only once its every event is delivered by every channel's sink (ackAfter = "
        "kafka) or on a file channel's disk (ackAfter = channel). Its events keep the headers and body they came "
        "with. Optionally over TLS (ssl = true).",
    .describe = &describe_avro,
    .make_source = &make_avro_source,
};

}  // namespace sluice::avro
