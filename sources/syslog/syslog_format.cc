#include "sources/syslog/syslog_format.h"

#include "sources/syslog/event_decoder.h"

namespace sluice::syslog {
namespace {

class SyslogFormat final : public pipeline::EventFormat {
 public:
  SyslogFormat(uint8_t keep_fields, std::vector<Charset> charsets)
      : decoder_(keep_fields), charsets_(std::move(charsets)), clock_(ParseClock::now()) {}

  int64_t begin_read() override {
    clock_.refresh();
    return clock_.now_ms;
  }

  EventRecord& decode(std::string_view message, pipeline::MessageTraits traits, size_t port_index,
                      EventBatchBuilder& batch, pipeline::MadeTally& tally) override {
    EventRecord& e = decoder_.decode(message, traits, charsets_[port_index], clock_, batch, tally.invalid_utf8);
    if (e.status == EventStatus::invalid) ++tally.invalid;
    return e;
  }

 private:
  EventDecoder decoder_;
  const std::vector<Charset> charsets_;  // by port index
  ParseClock clock_;
};

}  // namespace

SyslogFormatFactory::SyslogFormatFactory(uint8_t keep_fields, size_t event_size, std::vector<Charset> charsets)
    : keep_fields_(keep_fields), event_size_(event_size), charsets_(std::move(charsets)) {}

std::unique_ptr<pipeline::EventFormat> SyslogFormatFactory::make() const {
  return std::make_unique<SyslogFormat>(keep_fields_, charsets_);
}

uint64_t SyslogFormatFactory::max_event_bytes() const {
  // The frame, a body composed without some of its header fields (keepFields other than none or
  // all: at most the frame), and the client's address and name (clientIP/HostnameHeader).
  const bool composed = keep_fields_ != 0 && keep_fields_ != keep_all;
  return event_size_ * (composed ? 2 : 1) + 46 + 256;
}

}  // namespace sluice::syslog
