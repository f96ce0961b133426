#include "sources/syslog/syslog_stream.h"

#include <algorithm>

#include "sources/syslog/syslog_properties.h"

namespace sluice::syslog {

using C = SyslogStreamConfig;

const config::PropertyTable<SyslogStreamConfig>& syslog_stream_properties() {
  // clang-format off
  static const config::PropertyTable<C> table = config::joined<C>(
    config::lifted<C>(net::stream_properties()),
    config::PropertyTable<C>{
      keep_fields_property<C>(),
      {"charset.default", config::parsed_as(&C::default_charset, kCharset, charset_from_name),
       "UTF-8",
       "Encoding of the frames: UTF-8 (invalid sequences become U+FFFD and are counted), ISO-8859-1 (converted to "
       "UTF-8), or none (bytes passed unchecked). charset.port.<port> sets it for one port."},
    });
  // clang-format on
  return table;
}

void finish_syslog_stream_config(const config::ComponentConfig& component, SyslogStreamConfig& c,
                                 const std::vector<std::pair<std::string, std::string>>& port_charsets) {
  for (const auto& [key, name] : port_charsets) {
    const config::ValueContext ctx{component.full_key(key), component.where(key)};
    const auto port = static_cast<uint16_t>(config::parse_integer(key.substr(13), ctx, {.min = 1, .max = 65535}));
    const auto charset = charset_from_name(name);
    if (!charset) ctx.fail(name, kCharset);
    c.port_charsets[port] = *charset;
  }
  net::check_stream_settings(component, c);
  for (const auto& [port, charset] : c.port_charsets)
    if (std::find(c.ports.begin(), c.ports.end(), port) == c.ports.end())
      component.fail("charset.port." + std::to_string(port), "names a port that is not in ports");
}

std::unique_ptr<SyslogFormatFactory> syslog_format(const SyslogStreamConfig& config) {
  std::vector<Charset> charsets;
  for (uint16_t port : config.ports) charsets.push_back(config.charset_of(port));
  return std::make_unique<SyslogFormatFactory>(config.keep_fields, config.event_size, std::move(charsets));
}

}  // namespace sluice::syslog
