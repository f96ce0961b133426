#include "sources/syslog_tcp/syslog_tcp_config.h"

#include "sources/syslog/syslog_properties.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

namespace sluice::syslog_tcp {

using C = SyslogTcpConfig;

// A table, one row per property, laid out for reading rather than by clang-format.
// clang-format off
const config::PropertyTable<C> kSyslogTcpProperties = config::joined<C>(
    config::PropertyTable<C>{
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
    {"framing", config::one_of(&C::framing, {{"auto", Framing::detect}, {"non-transparent", Framing::lines}}), "auto",
     "auto: each frame is RFC 6587 octet-counted if it starts with a digit 1-9, else a line ended by LF, CRLF or NUL; "
     "non-transparent: lines only (for senders whose lines start with digits and have no PRI)."},
    keep_fields_property<C>(),
    port_header_property<C>(),
    client_ip_header_property<C>(),
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
    {"charset.default", config::parsed_as(&C::default_charset, kCharset, charset_from_name),
     "UTF-8",
     "Encoding of the frames: UTF-8 (invalid sequences become U+FFFD and are counted), ISO-8859-1 (converted to "
     "UTF-8), or none (bytes passed unchecked). charset.port.<port> sets it for one port."},
    {"idleTimeout", &C::idle_timeout, "0",
     "Close a connection that has sent nothing for this long (counted as connections_idle_closed); 0 = never.",
     {.min = 0}},
    {"backlog", &C::backlog, "4096",
     "listen() backlog: connections the kernel queues before the source accepts them (capped by net.core.somaxconn).",
     {.min = 1, .max = 1'000'000}},
},
    // ssl, ssl.*, keystore*, include-/exclude-*: the stream server's TLS rows (net/tls_settings.h).
    config::lifted<C>(tls_properties()));
// clang-format on

SyslogTcpConfig parse_syslog_tcp_config(const config::ComponentConfig& component,
                                        const config::PropertyTable<SyslogTcpConfig>& table) {
  std::vector<std::pair<std::string, std::string>> port_charsets;  // charset.port.<port> = name
  auto extra = [&](const std::string& key, const config::PropertyValue& given) {
    if (!key.starts_with("charset.port.")) return false;
    port_charsets.emplace_back(key, given.value);
    return true;
  };
  SyslogTcpConfig c = config::bind(table, component, extra);
  for (const auto& [key, name] : port_charsets) {
    const config::ValueContext ctx{component.full_key(key), component.where(key)};
    const auto port = static_cast<uint16_t>(config::parse_integer(key.substr(13), ctx, {.min = 1, .max = 65535}));
    const auto charset = charset_from_name(name);
    if (!charset) ctx.fail(name, kCharset);
    c.port_charsets[port] = *charset;
  }
  c.header_names =
      std::make_shared<HeaderNames>(HeaderNames{c.port_header, c.client_ip_header, c.client_hostname_header});
  if (c.ports.empty()) component.fail("ports", "is missing: list at least one TCP port to listen on");
  c.clients = ClientFilter(c.allow, c.deny);
  if (c.proxy_protocol != ProxyProtocol::none && c.proxy_trusted_from.empty())
    component.fail("proxyProtocol",
                   "needs proxyTrustedFrom: without it whoever reaches the port could claim any client address (and "
                   "pass allow/deny as it): list the balancers' networks in proxyTrustedFrom (e.g. 10.0.0.5 "
                   "10.0.1.0/24), or 0.0.0.0/0 ::/0 to trust every peer");
  if (c.proxy_protocol == ProxyProtocol::none && !c.proxy_trusted_from.empty())
    component.fail("proxyTrustedFrom", "is set but proxyProtocol is none: set proxyProtocol, or remove it");
  c.proxy_balancers = ClientFilter(c.proxy_trusted_from, {});
  check_tls_settings(component, c);
  for (const auto& [port, charset] : c.port_charsets)
    if (std::find(c.ports.begin(), c.ports.end(), port) == c.ports.end())
      component.fail("charset.port." + std::to_string(port), "names a port that is not in ports");
  return c;
}

int resolve_num_processors(int64_t configured) {
  if (configured > 0) return static_cast<int>(configured);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency() / 2));
}

}  // namespace sluice::syslog_tcp
