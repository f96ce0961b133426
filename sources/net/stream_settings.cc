#include "sources/net/stream_settings.h"

#include <algorithm>
#include <thread>

#include "sources/pipeline/origin_properties.h"

namespace sluice::net {

using pipeline::kNetwork;
using pipeline::parse_cidr;
using pipeline::parse_port;

const config::PropertyTable<StreamSettings>& stream_properties() {
  using C = StreamSettings;  // in here: the library's other settings file has its own C (a unity build joins them)
  // A table, one row per property, laid out for reading rather than by clang-format.
  // clang-format off
  static const config::PropertyTable<C> table{
    {"host", &C::host, "0.0.0.0", "Address to listen on (an IPv4 or IPv6 literal, or a name resolved at start)."},
    {"ports", config::list_of(&C::ports, "an integer in [0, 65535]", parse_port), "",
     "Space-separated TCP ports to listen on, all feeding this source; 0 picks a free port (tests).",
     {}, {}, {"port"}},
    {"batchSize", &C::batch_size, "100",
     "Max events per put into the channel; a partial batch is put at the end of every io loop round.",
     {.min = 1, .max = 1'000'000}},
    {"eventSize", &C::event_size, "2500",
     "Max bytes of one frame; longer frames are cut to this size, marked Incomplete and counted.",
     {.min = 16, .max = 16 * 1024 * 1024}},
    {"readBufferSize", &C::read_buffer_size, "0",
     "Kernel receive buffer (SO_RCVBUF) per connection; 0 keeps the kernel's default and autotuning.",
     {.min = 0, .max = 1LL << 30}, {}, {"readBufferBytes"}},
    {"numProcessors", &C::num_processors, "0",
     "io threads, each an event loop serving a share of the connections; 0 = half the CPUs (at least 1).",
     {.min = 0, .max = 256}},
    {"maxConnections", &C::max_connections, "100000",
     "Open connections at most; more are closed at once, counted (connections_refused) and logged.",
     {.min = 1, .max = 100'000'000}},
    {"allow", config::list_of(&C::allow, kNetwork, parse_cidr), "",
     "Client networks that may connect (CIDR, e.g. 10.0.0.0/8 ::1); empty: any. Others are refused and counted."},
    {"deny", config::list_of(&C::deny, kNetwork, parse_cidr), "",
     "Client networks refused even if allowed (CIDR)."},
    {"proxyProtocol",
     config::one_of(&C::proxy_protocol, {{"none", ProxyProtocol::none}, {"v1", ProxyProtocol::v1},
                                 {"v2", ProxyProtocol::v2}, {"auto", ProxyProtocol::any}}),
     "none",
     "Behind a load balancer that speaks HAProxy's PROXY protocol (HAProxy send-proxy / send-proxy-v2): v1, v2, or "
     "auto (either, but one is required). Each connection must start with the header, before TLS; its client "
     "address is what clientIPHeader, clientHostnameHeader, allow/deny and the logs use (LOCAL and UNKNOWN "
     "headers keep the balancer's). A connection without a valid header within proxyHeaderTimeout is refused and "
     "counted (reason proxy_header); one closed before sending anything (a balancer's TCP health check) is not. "
     "Needs proxyTrustedFrom: whoever may send the header can claim any client address."},
    {"proxyTrustedFrom", config::list_of(&C::proxy_trusted_from, kNetwork, parse_cidr), "",
     "With proxyProtocol (required there): the networks of the balancers whose PROXY headers are believed (CIDR, "
     "e.g. 10.0.0.5 10.0.1.0/24; as nginx's set_real_ip_from). A connection from any other address is refused "
     "at accept and counted (reason proxy_untrusted), before it can name a client; 0.0.0.0/0 ::/0 trusts every "
     "peer."},
    {"proxyHeaderTimeout", &C::proxy_header_timeout, "10s",
     "With proxyProtocol: how long a new connection may take to send its whole PROXY header.",
     {.min = 100, .max = 3'600'000}},
    pipeline::port_header_property<C>(),
    pipeline::client_ip_header_property<C>(),
    {"clientHostnameHeader", &C::client_hostname_header, "",
     "If set, the name under which each event carries the sender's host name, from reverse DNS done off the event loop "
     "once per connection (cached for hostnameCacheTtl; the IP when it has no name); a new connection is read once "
     "its name is known."},
    {"hostnameCacheTtl", &C::hostname_cache_ttl, "5m",
     "How long a reverse DNS answer for clientHostnameHeader is reused.", {.min = 0}},
    {"hostnameLookupTimeout", &C::hostname_lookup_timeout, "2s",
     "How long a new connection waits for its reverse DNS answer (clientHostnameHeader) before it is read with "
     "its address as the name (counted: sluice_source_hostname_lookups_given_up_total{reason=\"timeout\"}); a late "
     "answer is still cached. At most 64 lookups wait per io thread; beyond, the address is the name at once "
     "(reason skipped).",
     {.min = 10, .max = 600'000}},
    {"idleTimeout", &C::idle_timeout, "0",
     "Close a connection that has sent nothing for this long (counted as connections_idle_closed); 0 = never.",
     {.min = 0}},
    {"maxConnectionAge", &C::max_connection_age, "0",
     "Behind a load balancer: a connection older than this (plus its share of maxConnectionAgeJitter) is asked to "
     "reconnect, the way a stop ends it: our FIN, then it is read until its sender closes (nothing it sent is "
     "cut); RELP: no more reads, its replies go out, then serverclose (it resends what was not answered); Avro: "
     "the same, then the close. Its sender reconnects through the balancer, so a new agent gets a share of "
     "long-lived senders. Counted (sluice_source_connections_aged_total). 0 = never.",
     {.min = 0}},
    {"maxConnectionAgeJitter", &C::max_connection_age_jitter, "0",
     "With maxConnectionAge: each connection's age limit is maxConnectionAge plus a random share of this, so that "
     "connections opened together (after a restart) do not all reconnect together. 0: a tenth of "
     "maxConnectionAge.",
     {.min = 0}},
    pipeline::max_events_per_client_property<C>(
        "Per-sender fairness: the most events per second one client address (the PROXY header's, behind a "
        "balancer) may send, over all its connections, a second's worth at once; beyond it its connections are not "
        "read until its budget is back (TCP pushes back on that sender alone: nothing is dropped). Counted: "
        "sluice_source_clients_held, sluice_source_client_holds_total. 0 = no limit."),
    pipeline::max_bytes_per_client_property<C>(),
    {"backlog", &C::backlog, "4096",
     "listen() backlog: connections the kernel queues before the source accepts them (capped by net.core.somaxconn).",
     {.min = 1, .max = 1'000'000}},
  };
  // clang-format on
  return table;
}

void check_stream_settings(const config::ComponentConfig& component, StreamSettings& s) {
  s.header_names =
      std::make_shared<HeaderNames>(HeaderNames{s.port_header, s.client_ip_header, s.client_hostname_header});
  if (s.ports.empty()) component.fail("ports", "is missing: list at least one TCP port to listen on");
  s.clients = ClientFilter(s.allow, s.deny);
  if (s.proxy_protocol != ProxyProtocol::none && s.proxy_trusted_from.empty())
    component.fail("proxyProtocol",
                   "needs proxyTrustedFrom: without it whoever reaches the port could claim any client address (and "
                   "pass allow/deny as it): list the balancers' networks in proxyTrustedFrom (e.g. 10.0.0.5 "
                   "10.0.1.0/24), or 0.0.0.0/0 ::/0 to trust every peer");
  if (s.proxy_protocol == ProxyProtocol::none && !s.proxy_trusted_from.empty())
    component.fail("proxyTrustedFrom", "is set but proxyProtocol is none: set proxyProtocol, or remove it");
  s.proxy_balancers = ClientFilter(s.proxy_trusted_from, {});
  s.client_rate = {s.max_events_per_client, static_cast<int64_t>(s.max_bytes_per_client.bytes)};
  if (s.max_connection_age_jitter.count() == 0) s.max_connection_age_jitter = s.max_connection_age / 10;
  check_tls_settings(component, s);
}

int resolve_num_processors(int64_t configured) {
  if (configured > 0) return static_cast<int>(configured);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency() / 2));
}

}  // namespace sluice::net
