#include "sources/syslog_tcp/syslog_tcp_source.h"

#include "sources/syslog_tcp/syslog_framing.h"

namespace sluice::syslog_tcp {
namespace {

std::unique_ptr<Source> make_syslog_tcp_source(const config::ComponentConfig& component, std::vector<Channel*> channels,
                                               BuildContext& context) {
  SyslogTcpConfig c = parse_syslog_tcp_config(component);
  for (Channel* channel : channels) batch_size_for(component, "batchSize", c.batch_size, *channel);
  return std::make_unique<SyslogTcpSource>(component, c, std::move(channels), context.interceptors, context.selector);
}

}  // namespace

const ComponentSpec kSyslogTcpSourceSpec{
    .kind = config::Kind::source,
    .type = "multiport_syslogtcp",
    .aliases = {"syslogtcp", "org.apache.flume.source.MultiportSyslogTCPSource",
                "org.apache.flume.source.SyslogTcpSource"},
    .doc =
        "Syslog over TCP on one or more ports (LF/CRLF framing or RFC 6587 octet counting, RFC 3164/5424 "
        "headers); with ssl = true over TLS (RFC 5425), client certificates optional or required.",
    .describe = [] { return config::describe(kSyslogTcpProperties); },
    .make_source = &make_syslog_tcp_source,
};

SyslogTcpSource::SyslogTcpSource(config::ComponentConfig component, const SyslogTcpConfig& config,
                                 std::vector<Channel*> channels, std::shared_ptr<const InterceptorChain> interceptors,
                                 std::shared_ptr<const ChannelSelector> selector)
    : StreamServer(std::move(component), config, std::move(channels), std::move(selector),
                   std::make_unique<SyslogFramingFactory>(config.event_size, config.detect_octet_counting()),
                   syslog_format(config), std::move(interceptors)) {}

}  // namespace sluice::syslog_tcp
