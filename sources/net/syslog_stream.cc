#include "sources/net/syslog_stream.h"

#include <algorithm>

#include "sources/syslog/syslog_properties.h"

namespace sluice::net {
namespace {

// An io thread's decoder: its clock is read once per read, the charset is its port's.
class SyslogMessageEvents final : public MessageEvents {
 public:
  SyslogMessageEvents(uint8_t keep_fields, std::vector<Charset> charsets,
                      std::shared_ptr<const InterceptorChain> interceptors)
      : decoder_(keep_fields),
        charsets_(std::move(charsets)),
        interceptors_(std::move(interceptors)),
        clock_(syslog::ParseClock::now()) {}

  void begin_read() override { clock_.refresh(); }

  bool add(std::string_view message, bool truncated, const MessageOrigin& origin, EventBatchBuilder& batch,
           ReadTally& tally) override {
    EventRecord& e =
        decoder_.decode(message, truncated, charsets_[origin.port_index], clock_, batch, tally.invalid_utf8);
    syslog::stamp_origin(e, batch, {origin.port, origin.client, origin.client_ip_length});
    if (e.status == EventStatus::invalid) ++tally.invalid;
    if (interceptors_ && !interceptors_->apply(batch, clock_.now_ms)) {
      ++tally.filtered;
      return false;
    }
    return true;
  }

 private:
  syslog::EventDecoder decoder_;
  const std::vector<Charset> charsets_;  // by port index
  const std::shared_ptr<const InterceptorChain> interceptors_;
  syslog::ParseClock clock_;
};

}  // namespace

using C = SyslogStreamConfig;

const config::PropertyTable<SyslogStreamConfig>& syslog_stream_properties() {
  // clang-format off
  static const config::PropertyTable<C> table = config::joined<C>(
    config::lifted<C>(stream_properties()),
    config::PropertyTable<C>{
      syslog::keep_fields_property<C>(),
      {"charset.default", config::parsed_as(&C::default_charset, syslog::kCharset, syslog::charset_from_name),
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
    const auto charset = syslog::charset_from_name(name);
    if (!charset) ctx.fail(name, syslog::kCharset);
    c.port_charsets[port] = *charset;
  }
  check_stream_settings(component, c);
  for (const auto& [port, charset] : c.port_charsets)
    if (std::find(c.ports.begin(), c.ports.end(), port) == c.ports.end())
      component.fail("charset.port." + std::to_string(port), "names a port that is not in ports");
}

SyslogMessageEventsFactory::SyslogMessageEventsFactory(const SyslogStreamConfig& config,
                                                       std::shared_ptr<const InterceptorChain> interceptors)
    : keep_fields_(config.keep_fields), event_size_(config.event_size), interceptors_(std::move(interceptors)) {
  for (uint16_t port : config.ports) charsets_.push_back(config.charset_of(port));
}

std::unique_ptr<MessageEvents> SyslogMessageEventsFactory::make() const {
  return std::make_unique<SyslogMessageEvents>(keep_fields_, charsets_, interceptors_);
}

uint64_t SyslogMessageEventsFactory::max_event_bytes() const {
  // The frame, a body composed without some of its header fields (keepFields other than none or
  // all: at most the frame), and the client's address and name (clientIP/HostnameHeader).
  const bool composed = keep_fields_ != 0 && keep_fields_ != syslog::keep_all;
  return event_size_ * (composed ? 2 : 1) + 46 + 256;
}

}  // namespace sluice::net
