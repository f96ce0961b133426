#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/api/event_batch.h"
#include "agent/api/property_table.h"
#include "sources/net/proxy_header.h"
#include "sources/net/tls_settings.h"
#include "sources/syslog/charset.h"
#include "sources/syslog/client_filter.h"
#include "sources/syslog/event_decoder.h"

namespace sluice::syslog_tcp {

// The syslog parsing the syslog sources share (sources/syslog/).
using namespace ::sluice::syslog;
// The stream server's parts (sources/net/).
using namespace ::sluice::net;

// framing: auto (octet counting detected per frame) or non-transparent (lines only).
enum class Framing { detect, lines };

// Its TLS settings (net/tls_settings.h) are a base, so that their rows bind into it as they are.
struct SyslogTcpConfig : TlsSettings {
  std::string host;
  std::vector<uint16_t> ports;
  size_t batch_size = 0;
  size_t event_size = 0;
  config::ByteSize read_buffer_size;
  int64_t num_processors = 0;
  size_t backlog = 0;
  int64_t max_connections = 0;
  std::vector<Network> allow;
  std::vector<Network> deny;
  Framing framing = Framing::detect;
  ProxyProtocol proxy_protocol = ProxyProtocol::none;
  std::chrono::milliseconds proxy_header_timeout{0};
  std::vector<Network> proxy_trusted_from;
  uint8_t keep_fields = 0;  // KeepField bits
  std::string port_header;
  std::string client_ip_header;
  std::string client_hostname_header;
  Charset default_charset = Charset::utf8;
  std::chrono::milliseconds idle_timeout{0};
  std::chrono::milliseconds hostname_cache_ttl{0};
  std::chrono::milliseconds hostname_lookup_timeout{0};

  // Made by parse_syslog_tcp_config from the above and the charset.port.<port> keys:
  ClientFilter clients;                       // allow and deny
  ClientFilter proxy_balancers;               // proxyTrustedFrom: whose PROXY headers are believed
  std::map<uint16_t, Charset> port_charsets;  // charset.port.<port>
  std::shared_ptr<const HeaderNames> header_names;

  bool detect_octet_counting() const { return framing == Framing::detect; }

  Charset charset_of(uint16_t port) const {
    const auto it = port_charsets.find(port);
    return it == port_charsets.end() ? default_charset : it->second;
  }
};

extern const config::PropertyTable<SyslogTcpConfig> kSyslogTcpProperties;

// Binds the table and checks what it cannot express (ports given, charset.port.<port> keys).
// `table`: kSyslogTcpProperties, or one adapted from it (RELP's: its own defaults).
SyslogTcpConfig parse_syslog_tcp_config(const config::ComponentConfig& component,
                                        const config::PropertyTable<SyslogTcpConfig>& table = kSyslogTcpProperties);

// io threads for numProcessors = 0: half the CPUs, at least one.
int resolve_num_processors(int64_t configured);

}  // namespace sluice::syslog_tcp
