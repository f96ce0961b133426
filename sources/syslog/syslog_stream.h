#pragma once
// Syslog messages over a stream server's connections (TCP and RELP): the settings that say how
// they become events (keepFields, charsets) beside the stream's own, their table, and the format
// that decodes them (syslog_format.h).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/api/property_table.h"
#include "sources/net/stream_settings.h"
#include "sources/syslog/charset.h"
#include "sources/syslog/syslog_format.h"

namespace sluice::syslog {

struct SyslogStreamConfig : net::StreamSettings {
  uint8_t keep_fields = 0;  // syslog::KeepField bits
  Charset default_charset = Charset::utf8;
  std::map<uint16_t, Charset> port_charsets;  // charset.port.<port>

  Charset charset_of(uint16_t port) const {
    const auto it = port_charsets.find(port);
    return it == port_charsets.end() ? default_charset : it->second;
  }
};

// The stream's rows (stream_settings.h), then keepFields and charset.default (TLS's are apart:
// tls_properties()).
const config::PropertyTable<SyslogStreamConfig>& syslog_stream_properties();

// Binds `table` (a source's, made of the rows above) and checks what it cannot express: the
// stream settings together, the charset.port.<port> keys.
template <class C>
C parse_syslog_stream_config(const config::ComponentConfig& component, const config::PropertyTable<C>& table);

// The charset.port.<port> keys (`port_charsets`: key, name) into `c`, and the stream settings checked.
void finish_syslog_stream_config(const config::ComponentConfig& component, SyslogStreamConfig& c,
                                 const std::vector<std::pair<std::string, std::string>>& port_charsets);

// The format its events are made with: each port's charset.
std::unique_ptr<SyslogFormatFactory> syslog_format(const SyslogStreamConfig& config);

template <class C>
C parse_syslog_stream_config(const config::ComponentConfig& component, const config::PropertyTable<C>& table) {
  static_assert(std::is_base_of_v<SyslogStreamConfig, C>);
  std::vector<std::pair<std::string, std::string>> port_charsets;  // charset.port.<port> = name
  auto extra = [&](const std::string& key, const config::PropertyValue& given) {
    if (!key.starts_with("charset.port.")) return false;
    port_charsets.emplace_back(key, given.value);
    return true;
  };
  C c = config::bind(table, component, extra);
  finish_syslog_stream_config(component, c, port_charsets);
  return c;
}

}  // namespace sluice::syslog
