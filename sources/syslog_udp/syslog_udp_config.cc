#include "sources/syslog_udp/syslog_udp_config.h"

#include "sources/pipeline/origin_properties.h"
#include "sources/syslog/syslog_properties.h"

#include <charconv>
#include <optional>

namespace sluice::syslog_udp {

using C = SyslogUdpConfig;
// A table, one row per property, laid out for reading rather than by clang-format.
// clang-format off
const config::PropertyTable<C> kSyslogUdpProperties{
    {"host", &C::host, "0.0.0.0", "Address to listen on (an IPv4 or IPv6 literal)."},
    {"ports", config::list_of(&C::ports, "an integer in [0, 65535]", parse_port), "",
     "Space-separated UDP ports, all feeding this source; 0 picks a free port (tests). Each io thread has its own "
     "socket on every port (SO_REUSEPORT), and the kernel spreads the senders over them.",
     {}, {}, {"port"}},
    {"batchSize", &C::batch_size, "100",
     "Max events per put into the channel; a partial batch is put whenever the sockets have nothing more to read.",
     {.min = 1, .max = 1'000'000}},
    {"eventSize", &C::event_size, "2500",
     "Max bytes of one datagram kept; a longer one is cut here, marked Incomplete and counted.",
     {.min = 16, .max = 65535}},
    {"readBufferSize", &C::read_buffer_size, "16m",
     "Kernel receive buffer (SO_RCVBUF) per socket: what absorbs a burst while the channel is full, since UDP has "
     "no backpressure (capped by net.core.rmem_max, see sysctl/, unless the agent has CAP_NET_ADMIN).",
     {.min = 0, .max = 1LL << 30}, {}, {"readBufferBytes"}},
    {"numProcessors", &C::num_processors, "0",
     "io threads, each with its own socket per port; 0 = half the CPUs (at least 1).", {.min = 0, .max = 256}},
    {"allow", config::list_of(&C::allow, kNetwork, parse_cidr), "",
     "Client networks whose datagrams are taken (CIDR); empty: any. Others are dropped and counted."},
    {"deny", config::list_of(&C::deny, kNetwork, parse_cidr), "", "Client networks dropped even if allowed (CIDR)."},
    keep_fields_property<C>(),
    port_header_property<C>(),
    client_ip_header_property<C>(),
    max_events_per_client_property<C>(
        "Per-sender fairness: the most datagrams per second one client address may have taken, a second's worth at "
        "once; beyond it its datagrams are dropped and counted (sluice_source_events_over_client_rate_total: UDP "
        "cannot push back), so that one runaway sender cannot fill the channel for the others. Counted: "
        "sluice_source_clients_held. 0 = no limit."),
    max_bytes_per_client_property<C>(),
    {"charset.default", config::parsed_as(&C::charset, kCharset, charset_from_name), "UTF-8",
     "Encoding of the datagrams: UTF-8 (invalid sequences become U+FFFD and are counted), ISO-8859-1, or none."},
};
// clang-format on

SyslogUdpConfig parse_syslog_udp_config(const config::ComponentConfig& component) {
  SyslogUdpConfig c = config::bind(kSyslogUdpProperties, component);
  if (c.ports.empty()) component.fail("ports", "is missing: list at least one UDP port to listen on");
  for (size_t i = 0; i < c.ports.size(); ++i)
    for (size_t j = i + 1; j < c.ports.size(); ++j)
      if (c.ports[i] != 0 && c.ports[i] == c.ports[j])
        component.fail("ports", "lists port " + std::to_string(c.ports[i]) + " twice");
  c.clients = ClientFilter(c.allow, c.deny);
  c.header_names = std::make_shared<HeaderNames>(HeaderNames{c.port_header, c.client_ip_header, ""});
  c.client_rate = {c.max_events_per_client, static_cast<int64_t>(c.max_bytes_per_client.bytes)};
  return c;
}

}  // namespace sluice::syslog_udp
