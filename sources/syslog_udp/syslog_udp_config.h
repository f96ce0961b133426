#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/api/event_batch.h"
#include "agent/api/property_table.h"
#include "sources/pipeline/client_filter.h"
#include "sources/pipeline/client_rate.h"
#include "sources/syslog/charset.h"
#include "sources/syslog/event_decoder.h"

namespace sluice::syslog_udp {

using namespace ::sluice::syslog;
using namespace ::sluice::pipeline;

struct SyslogUdpConfig {
  std::string host;
  std::vector<uint16_t> ports;
  size_t batch_size = 0;
  size_t event_size = 0;  // a longer datagram is cut here, marked Incomplete and counted
  config::ByteSize read_buffer_size;
  int64_t num_processors = 0;
  std::vector<Network> allow;
  std::vector<Network> deny;
  uint8_t keep_fields = 0;  // KeepField bits
  std::string port_header;
  std::string client_ip_header;
  Charset charset = Charset::utf8;
  int64_t max_events_per_client = 0;  // per client address; 0: no limit
  config::ByteSize max_bytes_per_client;

  // Made by parse_syslog_udp_config:
  ClientFilter clients;
  std::shared_ptr<const HeaderNames> header_names;
  ClientRateLimits client_rate;
};

extern const config::PropertyTable<SyslogUdpConfig> kSyslogUdpProperties;

// Binds the table and checks what it cannot express (ports given).
SyslogUdpConfig parse_syslog_udp_config(const config::ComponentConfig& component);

}  // namespace sluice::syslog_udp
