#pragma once
// Syslog messages over a stream server's connections (TCP and RELP): the settings that say how
// they become events (keepFields, charsets) beside the stream's own, their table, and the
// MessageEvents that decodes them (sources/syslog/event_decoder.h) and stamps their origin.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/api/interceptor.h"
#include "agent/api/property_table.h"
#include "sources/net/message_events.h"
#include "sources/net/stream_settings.h"
#include "sources/syslog/charset.h"
#include "sources/syslog/event_decoder.h"

namespace sluice::net {

using syslog::Charset;

struct SyslogStreamConfig : StreamSettings {
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

class SyslogMessageEventsFactory final : public MessageEventsFactory {
 public:
  // `interceptors`: the source's (null: none), applied to every event made.
  SyslogMessageEventsFactory(const SyslogStreamConfig& config, std::shared_ptr<const InterceptorChain> interceptors);
  std::unique_ptr<MessageEvents> make() const override;
  uint64_t max_event_bytes() const override;
  std::optional<std::vector<std::string>> headers_made(const HeaderNames* names) const override {
    return sluice::headers_made(interceptors_.get(), names);
  }

 private:
  const uint8_t keep_fields_;
  const size_t event_size_;
  std::vector<Charset> charsets_;  // by port index
  const std::shared_ptr<const InterceptorChain> interceptors_;
};

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

}  // namespace sluice::net
