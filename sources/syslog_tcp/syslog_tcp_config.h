#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/api/property_table.h"
#include "agent/api/event_batch.h"
#include "sources/syslog_tcp/charset.h"
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
  std::string framing;
  std::vector<std::string> keep_fields_text;
  std::string port_header;
  std::string client_ip_header;
  std::string client_hostname_header;
  std::string default_charset_name;
  std::chrono::milliseconds idle_timeout{0};
  std::chrono::milliseconds hostname_cache_ttl{0};

  // Parsed by parse_syslog_tcp_config from the texts above:
  std::vector<uint16_t> ports;
  ClientFilter clients;
  bool detect_octet_counting = true;
  uint8_t keep_fields = 0;  // KeepField bits
  Charset default_charset = Charset::utf8;
  std::map<uint16_t, Charset> port_charsets;  // charset.port.<port>
  std::shared_ptr<const HeaderNames> header_names;

  Charset charset_of(uint16_t port) const {
    const auto it = port_charsets.find(port);
    return it == port_charsets.end() ? default_charset : it->second;
  }
};

// Header fields that keepFields keeps in the body (Flume's names).
enum KeepField : uint8_t {
  keep_priority = 1,
  keep_version = 2,
  keep_timestamp = 4,
  keep_hostname = 8,
  keep_all = 15,
};

extern const config::PropertyTable<SyslogTcpConfig> kSyslogTcpProperties;

// Binds the table and checks what it cannot express (each port a number in 0..65535).
SyslogTcpConfig parse_syslog_tcp_config(const config::ComponentConfig& component);

// io threads for numProcessors = 0: half the CPUs, at least one.
int resolve_num_processors(int64_t configured);

}  // namespace sluice::syslog_tcp
