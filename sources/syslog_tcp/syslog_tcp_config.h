#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "agent/config/property_table.h"
#include "sources/syslog_tcp/client_filter.h"

namespace sluice::syslog_tcp {

struct SyslogTcpConfig {
  std::string host;
  std::vector<std::string> ports_text;
  int64_t batch_size = 0;
  int64_t event_size = 0;
  config::ByteSize read_buffer_size;
  int64_t num_processors = 0;
  int64_t backlog = 0;
  int64_t max_connections = 0;
  std::vector<std::string> allow_text;
  std::vector<std::string> deny_text;

  std::vector<uint16_t> ports;  // parsed from ports_text by parse_syslog_tcp_config
  ClientFilter clients;         // parsed from allow_text and deny_text
};

extern const config::PropertyTable<SyslogTcpConfig> kSyslogTcpProperties;

// Binds the table and checks what it cannot express (each port a number in 0..65535).
SyslogTcpConfig parse_syslog_tcp_config(const config::ComponentConfig& component);

// io threads for numProcessors = 0: half the CPUs, at least one.
int resolve_num_processors(int64_t configured);

}  // namespace sluice::syslog_tcp
