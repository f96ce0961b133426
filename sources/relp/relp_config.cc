#include "sources/relp/relp_config.h"

#include <algorithm>

namespace sluice::relp {

using C = RelpConfig;

// clang-format off
const config::PropertyTable<C> kRelpProperties{
    {"ackAfter", config::one_of(&C::ack_after, {{"kafka", AckAfter::kafka}, {"channel", AckAfter::channel}}), "kafka",
     "When a message is answered \"200 OK\" (and the sender may forget it): kafka = once every channel's sink "
     "has delivered it (with acks=all: in Kafka's in-sync replicas); channel = once every channel took it, which "
     "must be a file channel (its puts are on disk; fsync = batch for power loss too). Never before."},
    {"maxDataSize", &C::max_data_size, "128k",
     "The largest RELP frame taken (librelp's default); a larger one ends the session, counted, and the sender "
     "resends. eventSize defaults to it for RELP; if eventSize is set lower, a longer message is cut there, marked "
     "Incomplete, counted, and answered.",
     {.min = 1024, .max = 64 << 20}},
};
// clang-format on

const config::PropertyTable<syslog::SyslogStreamConfig>& relp_stream_properties() {
  using S = syslog::SyslogStreamConfig;
  static const auto table = [] {
    auto rows = config::joined<S>(config::adapted(syslog::syslog_stream_properties(), {{"eventSize", "131072"}}),
                                  config::lifted<S>(net::tls_properties()));
    for (auto& row : rows)
      if (row.name == "eventSize")
        row.doc =
            "Max bytes of one message; a longer one is cut to this size, marked Incomplete, counted and answered. "
            "Unless set, it is maxDataSize (whose default, 131072, is this default): every message taken is kept "
            "whole.";
    return rows;
  }();
  return table;
}

RelpSourceConfig parse_relp_source_config(const config::ComponentConfig& component) {
  RelpSourceConfig c;
  // Ours first (the rest is the stream's table's, checked there), then the stream's table on the rest.
  c.relp =
      config::bind(kRelpProperties, component, [](const std::string&, const config::PropertyValue&) { return true; });
  config::ComponentConfig tcp_part = component;
  std::erase_if(tcp_part.properties,
                [](const auto& entry) { return config::find_property(kRelpProperties, entry.first) != nullptr; });
  if (tcp_part.properties.count("framing"))
    component.fail("framing", "means nothing for RELP, which frames its messages itself: remove it");
  c.tcp = syslog::parse_syslog_stream_config(tcp_part, relp_stream_properties());
  // Unless eventSize is given, it follows maxDataSize (its default is maxDataSize's): every
  // message taken is kept whole.
  if (!component.properties.count("eventSize")) c.tcp.event_size = static_cast<size_t>(c.relp.max_data_size.bytes);
  return c;
}

}  // namespace sluice::relp
