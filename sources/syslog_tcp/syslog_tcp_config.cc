#include "sources/syslog_tcp/syslog_tcp_config.h"

#include <thread>
#include <tuple>

namespace sluice::syslog_tcp {

using C = SyslogTcpConfig;
const config::PropertyTable<C> kSyslogTcpProperties{
    {"host", &C::host, "0.0.0.0", "Address to listen on (an IPv4 or IPv6 literal, or a name resolved at start)."},
    {"ports", &C::ports_text, "",
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
    {"allow", &C::allow_text, "",
     "Client networks that may connect (CIDR, e.g. 10.0.0.0/8 ::1); empty: any. Others are refused and counted."},
    {"deny", &C::deny_text, "", "Client networks refused even if allowed (CIDR)."},
    {"backlog", &C::backlog, "4096",
     "listen() backlog: connections the kernel queues before the source accepts them (capped by net.core.somaxconn).",
     {.min = 1, .max = 1'000'000}},
};

SyslogTcpConfig parse_syslog_tcp_config(const config::ComponentConfig& component) {
  SyslogTcpConfig c = config::bind(kSyslogTcpProperties, component);
  if (c.ports_text.empty()) component.fail("ports", "is missing: list at least one TCP port to listen on");
  for (const std::string& text : c.ports_text) {
    const config::ValueContext ctx{component.full_key("ports"), component.where("ports")};
    c.ports.push_back(static_cast<uint16_t>(config::parse_integer(text, ctx, {.min = 0, .max = 65535})));
  }
  std::vector<Network> allow, deny;
  for (const auto& [property, texts, networks] :
       {std::tuple{"allow", &c.allow_text, &allow}, std::tuple{"deny", &c.deny_text, &deny}}) {
    for (const std::string& text : *texts) {
      const auto network = parse_network(text);
      if (!network) component.fail(property, "\"" + text + "\" is not a network (e.g. 10.0.0.0/8, 192.0.2.7, fd00::/8)");
      networks->push_back(*network);
    }
  }
  c.clients = ClientFilter(std::move(allow), std::move(deny));
  return c;
}

int resolve_num_processors(int64_t configured) {
  if (configured > 0) return static_cast<int>(configured);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency() / 2));
}

}  // namespace sluice::syslog_tcp
