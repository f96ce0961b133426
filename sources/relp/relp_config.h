#pragma once
// The RELP source's own properties; everything else (host, ports, connections, parsing,
// headers, TLS) is a syslog stream's (syslog/syslog_stream.h) with RELP's own defaults
// (relp_stream_properties).

#include "agent/api/property_table.h"
#include "sources/relp/relp_session.h"
#include "sources/syslog/syslog_stream.h"

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
// A syslog stream's table (and TLS's) as RELP has it: eventSize defaults to maxDataSize's
// default (a message the agent answers is one the sender forgets: kept whole).
const config::PropertyTable<syslog::SyslogStreamConfig>& relp_stream_properties();

struct RelpSourceConfig {
  RelpConfig relp;
  syslog::SyslogStreamConfig tcp;
};

// Both tables from one component; a property of neither is refused, and so is one that means
// nothing for RELP (framing: RELP frames its messages itself).
RelpSourceConfig parse_relp_source_config(const config::ComponentConfig& component);

}  // namespace sluice::relp
