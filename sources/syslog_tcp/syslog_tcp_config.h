#pragma once
#include "agent/api/property_table.h"
#include "sources/syslog/syslog_stream.h"

namespace sluice::syslog_tcp {

// The syslog parsing the syslog sources share (sources/syslog/).
using namespace ::sluice::syslog;
// The stream server's parts (sources/net/).
using namespace ::sluice::net;

// framing: auto (octet counting detected per frame) or non-transparent (lines only).
enum class Framing { detect, lines };

// The stream's and its syslog messages' settings (syslog/syslog_stream.h) are a base, so that their
// rows bind into it as they are.
struct SyslogTcpConfig : SyslogStreamConfig {
  Framing framing = Framing::detect;

  bool detect_octet_counting() const { return framing == Framing::detect; }
};

extern const config::PropertyTable<SyslogTcpConfig> kSyslogTcpProperties;

// Binds the table and checks what it cannot express (ports given, charset.port.<port> keys).
SyslogTcpConfig parse_syslog_tcp_config(const config::ComponentConfig& component);

}  // namespace sluice::syslog_tcp
