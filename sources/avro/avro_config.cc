#include "sources/avro/avro_config.h"

#include <algorithm>

#include "sources/net/tls_settings.h"

namespace sluice::avro {

using C = AvroConfig;

// clang-format off
const config::PropertyTable<C> kAvroProperties{
    {"ackAfter", config::one_of(&C::acknowledge_on_put, {{"kafka", false}, {"channel", true}}), "kafka",
     "When a call is answered OK (and Flume's sink commits its take): kafka = once every channel's sink has "
     "delivered each of its events; channel = once every channel took them, which must be file channels (their "
     "puts are on disk). Never before: an answered call is held, whatever stops the agent."},
    {"maxFrameSize", &C::max_frame_size, "64m",
     "The largest call taken (one frame's bytes: an appendBatch of batch-size events); a larger one ends the "
     "connection, counted (the sender's sink rolls back and sends it again).",
     {.min = 1024, .max = 1LL << 30}},
    {"maxBatchEvents", &C::max_batch_events, "100000",
     "The most events one appendBatch may carry; a call with more is answered with an error, counted, and the "
     "connection goes on.",
     {.min = 1, .max = 10'000'000}},
    {"channelFullTimeout", &C::channel_full_timeout, "3s",
     "How long a call's events may wait for room in a full required channel before the call is answered FAILED "
     "(Flume's answer when its channel is full: the sender's sink rolls back and sends again, or its sink group "
     "fails over). Some of its events may be in another channel by then: sent again, they are duplicates. Keep "
     "it well under the senders' request-timeout (Flume's: 20 s), or they give up first and resend anyway; 0 = "
     "never answer FAILED (the connection waits, as the syslog sources' senders do).",
     {.min = 0, .max = 3'600'000}},
    {"ipFilter", &C::ip_filter, "false", "Flume's: true = admit clients by ipFilterRules."},
    {"ipFilterRules", &C::ip_filter_rules, "",
     "Flume's: rules separated by commas, each <allow|deny>:<ip|name>:<pattern>, tried in order, the first that "
     "matches deciding, a client none matches let in; a client denied is closed at connect (counted as refused, "
     "reason denied). An ip pattern matches the address whole ('*' any run, '?' one character: 127.*, "
     "10.0.?.*); name:localhost matches a loopback address. Other name patterns are refused (they would need a "
     "reverse lookup at each connect): match addresses, or use allow/deny networks."},
    {"threads", &C::threads, "0",
     "Flume's: accepted and, as by Flume 1.11's AvroSource, not used; numProcessors sets the io threads.",
     {.min = 0, .max = 1'000'000}},
    {"compression-type", config::one_of(&C::deflate, {{"none", false}, {"NONE", false}, {"deflate", true}}), "none",
     "Flume's: deflate = every connection's both directions in zlib, as Flume's Avro sink with compression-type = "
     "deflate sends (a sender must use the same setting: a deflate stream on a source of none is not Avro RPC, "
     "and ends its connection, counted). Not with ssl (Flume 1.11 compresses outside its TLS, an order Sluice "
     "does not speak)."},
};
// clang-format on

const config::PropertyTable<net::StreamSettings>& avro_stream_properties() {
  using S = net::StreamSettings;
  static const auto table = [] {
    auto rows = config::joined<S>(net::stream_properties(), config::lifted<S>(net::tls_properties()));
    std::erase_if(rows, [](const auto& row) { return row.name == "eventSize"; });
    for (auto& row : rows) {
      if (row.name == "host") {
        row.aliases.push_back("bind");
        row.doc = "Address to listen on (Flume's bind; an IPv4 or IPv6 literal, or a name resolved at start).";
      }
      // Senders are Flume agents, one connection per Avro sink, and each may hold a frame of
      // maxFrameSize: the memory bound is this times three frames.
      if (row.name == "maxConnections") {
        row.default_value = "1000";
        row.doc =
            "Open connections at most (a Flume agent keeps one per Avro sink); more are closed at once, counted "
            "(connections_refused) and logged. Each may hold up to three times maxFrameSize: this bounds the "
            "source's memory (sluice --check prints it).";
      }
    }
    return rows;
  }();
  return table;
}

AvroSourceConfig parse_avro_source_config(const config::ComponentConfig& component) {
  AvroSourceConfig c;
  c.avro =
      config::bind(kAvroProperties, component, [](const std::string&, const config::PropertyValue&) { return true; });
  config::ComponentConfig stream_part = component;
  std::erase_if(stream_part.properties,
                [](const auto& entry) { return config::find_property(kAvroProperties, entry.first) != nullptr; });
  c.stream = config::bind(avro_stream_properties(), stream_part);
  if (c.avro.deflate && c.stream.ssl)
    component.fail("compression-type",
                   "deflate with ssl is not supported (Flume 1.11 compresses outside its TLS, an order Sluice does "
                   "not speak): choose one");
  net::check_stream_settings(component, c.stream);
  if (c.avro.ip_filter) {
    if (c.avro.ip_filter_rules.empty())
      component.fail("ipFilterRules", "is missing: ipFilter = true needs rules (e.g. allow:ip:10.*,deny:ip:*)");
    try {
      c.stream.clients.set_flume_rules(std::make_shared<pipeline::FlumeIpRules>(c.avro.ip_filter_rules));
    } catch (const std::invalid_argument& e) {
      component.fail("ipFilterRules", e.what());
    }
  } else if (!c.avro.ip_filter_rules.empty()) {
    component.fail("ipFilterRules", "is set but ipFilter is not true: set ipFilter = true, or remove it");
  }
  return c;
}

}  // namespace sluice::avro
