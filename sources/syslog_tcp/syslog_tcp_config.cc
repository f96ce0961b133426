#include "sources/syslog_tcp/syslog_tcp_config.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <thread>

namespace sluice::syslog_tcp {

using C = SyslogTcpConfig;

// A table, one row per property, laid out for reading rather than by clang-format.
// clang-format off
const config::PropertyTable<C> kSyslogTcpProperties{
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
     {.min = 0, .max = 1LL << 31}, {}, {"readBufferBytes"}},
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
    {"framing", config::one_of(&C::framing, {{"auto", Framing::detect}, {"non-transparent", Framing::lines}}), "auto",
     "auto: each frame is RFC 6587 octet-counted if it starts with a digit 1-9, else a line ended by LF, CRLF or NUL; "
     "non-transparent: lines only (for senders whose lines start with digits and have no PRI)."},
    {"keepFields",
     config::flags_of(&C::keep_fields,
              {{"none", 0}, {"false", 0}, {"all", keep_all}, {"true", keep_all}, {"priority", keep_priority},
               {"version", keep_version}, {"timestamp", keep_timestamp}, {"hostname", keep_hostname}},
              "none, all, or some of priority version timestamp hostname"),
     "none",
     "Header fields kept in the body: none, all, or a list of priority version timestamp hostname (Flume's; "
     "true = all, false = none)."},
    {"portHeader", &C::port_header, "",
     "If set, the name under which each event carries the local port it arrived on (json format; keyField port)."},
    {"clientIPHeader", &C::client_ip_header, "",
     "If set, the name under which each event carries the sender's IP address (json format; keyField clientIP)."},
    {"clientHostnameHeader", &C::client_hostname_header, "",
     "If set, the name under which each event carries the sender's host name, from reverse DNS done off the event loop "
     "once per connection (cached for hostnameCacheTtl; the IP when it has no name); a new connection is read once "
     "its name is known."},
    {"hostnameCacheTtl", &C::hostname_cache_ttl, "5m",
     "How long a reverse DNS answer for clientHostnameHeader is reused.", {.min = 0}},
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
};
// clang-format on

SyslogTcpConfig parse_syslog_tcp_config(const config::ComponentConfig& component) {
  std::vector<std::pair<std::string, std::string>> port_charsets;  // charset.port.<port> = name
  auto extra = [&](const std::string& key, const config::PropertyValue& given) {
    if (!key.starts_with("charset.port.")) return false;
    port_charsets.emplace_back(key, given.value);
    return true;
  };
  SyslogTcpConfig c = config::bind(kSyslogTcpProperties, component, extra);
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
