#include "sources/syslog_tcp/syslog_tcp_config.h"

namespace sluice::syslog_tcp {

using C = SyslogTcpConfig;

// clang-format off
const config::PropertyTable<C> kSyslogTcpProperties = config::joined<C>(
    config::joined<C>(
        // host, ports, ..., keepFields, charset.default: a syslog stream's (syslog/syslog_stream.h).
        config::lifted<C>(syslog_stream_properties()),
        config::PropertyTable<C>{
    {"framing", config::one_of(&C::framing, {{"auto", Framing::detect}, {"non-transparent", Framing::lines}}), "auto",
     "auto: each frame is RFC 6587 octet-counted if it starts with a digit 1-9, else a line ended by LF, CRLF or NUL; "
     "non-transparent: lines only (for senders whose lines start with digits and have no PRI)."},
        }),
    // ssl, ssl.*, keystore*, include-/exclude-*: the stream server's TLS rows (net/tls_settings.h).
    config::lifted<C>(tls_properties()));
// clang-format on

SyslogTcpConfig parse_syslog_tcp_config(const config::ComponentConfig& component) {
  return parse_syslog_stream_config(component, kSyslogTcpProperties);
}

}  // namespace sluice::syslog_tcp
