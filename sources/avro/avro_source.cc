#include "sources/avro/avro_source.h"

#include "agent/api/channel.h"
#include "sources/avro/avro_config.h"
#include "sources/avro/avro_format.h"
#include "sources/net/answered_channels.h"
#include "sources/net/stream_server.h"

namespace sluice::avro {
namespace {

std::vector<config::PropertyDoc> describe_avro() {
  std::vector<config::PropertyDoc> docs = config::describe(kAvroProperties);
  for (config::PropertyDoc& doc : config::describe(avro_stream_properties())) docs.push_back(std::move(doc));
  return docs;
}

std::unique_ptr<Source> make_avro_source(const config::ComponentConfig& component, std::vector<Channel*> channels,
                                         BuildContext& context) {
  AvroSourceConfig c = parse_avro_source_config(component);
  net::check_answered_channels(component, channels, context.selector.get(), c.avro.acknowledge_on_put,
                               c.stream.batch_size,
                               "a call is answered once a required channel holds its events, and a copy an "
                               "optional channel drops would be answered too; make one of them required");
  AvroSettings settings = c.settings();
  // A call goes into each channel in one put: none larger than the smallest transactionCapacity.
  for (const Channel* channel : channels) {
    if (channel->transaction_capacity() < settings.max_batch_events) {
      settings.max_batch_events = channel->transaction_capacity();
      settings.max_batch_why = "the transactionCapacity (" + std::to_string(channel->transaction_capacity()) +
                               ") of channel '" + channel->name() +
                               "': lower the sender's batch-size, or raise the channel's transactionCapacity";
    }
    if (channel->largest_put() < settings.max_batch_events) {  // a spillable channel's memory or disk part
      settings.max_batch_events = channel->largest_put();
      settings.max_batch_why = "the most events channel '" + channel->name() + "' takes in one put (" +
                               std::to_string(channel->largest_put()) +
                               ": its memoryCapacity or overflowCapacity): lower the sender's batch-size";
    }
  }
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
