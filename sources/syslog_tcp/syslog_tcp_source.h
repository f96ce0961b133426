#pragma once
// multiport_syslogtcp: syslog over TCP on several ports (and TLS with ssl = true). The stream
// server (sources/net/stream_server.h) does the work; this component is its table and its
// protocol: plain syslog framing (syslog_framing.h, framer.h), messages decoded as syslog
// (syslog/syslog_stream.h).

#include <vector>

#include "agent/api/component_spec.h"
#include "sources/net/stream_server.h"
#include "sources/syslog_tcp/syslog_tcp_config.h"

namespace sluice::syslog_tcp {

using SyslogTcpCounters = net::StreamCounters;

class SyslogTcpSource final : public net::StreamServer {
 public:
  // `interceptors`: applied to every event made (null: none); `selector`: which of `channels`
  // each event goes into (null: every one, all required).
  SyslogTcpSource(config::ComponentConfig component, const SyslogTcpConfig& config, std::vector<Channel*> channels,
                  std::shared_ptr<const InterceptorChain> interceptors = nullptr,
                  std::shared_ptr<const ChannelSelector> selector = nullptr);
};

extern const ComponentSpec kSyslogTcpSourceSpec;

}  // namespace sluice::syslog_tcp
