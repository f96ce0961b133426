#pragma once
// The RELP source's own properties; everything else (host, ports, connections, parsing,
// headers, TLS) is the syslog TCP source's table with RELP's own defaults and without framing
// (relp_tcp_properties), read by parse_syslog_tcp_config.

#include "agent/api/property_table.h"
#include "sources/relp/relp_session.h"
#include "sources/syslog_tcp/syslog_tcp_config.h"

namespace sluice::relp {

// ackAfter: when a message is answered "200 OK" (stream_protocol.h).
enum class AckAfter {
  kafka,    // every channel committed its event: delivered by the sink (acks=all: in Kafka)
  channel,  // every channel took it, each one a channel whose puts reach the disk (file)
};

struct RelpConfig {
  AckAfter ack_after = AckAfter::kafka;
  config::ByteSize max_data_size;
};

extern const config::PropertyTable<RelpConfig> kRelpProperties;
// The TCP source's table as RELP has it: eventSize defaults to maxDataSize's default (a message
// the agent answers is one the sender forgets: kept whole), framing left out (RELP frames its
// messages itself).
const config::PropertyTable<syslog_tcp::SyslogTcpConfig>& relp_tcp_properties();

struct RelpSourceConfig {
  RelpConfig relp;
  syslog_tcp::SyslogTcpConfig tcp;
};

// Both tables from one component; a property of neither is refused, and so is one that means
// nothing for RELP (framing: RELP frames its messages itself).
RelpSourceConfig parse_relp_source_config(const config::ComponentConfig& component);

}  // namespace sluice::relp
