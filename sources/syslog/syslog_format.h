#pragma once
// Syslog's EventFormat (sources/pipeline/event_maker.h): each message a syslog line, decoded by
// the EventDecoder (charset, parse, keepFields) with the port's charset; its clock read once per
// read. TCP, TLS, RELP and UDP make their events with it.

#include <memory>
#include <vector>

#include "sources/pipeline/event_maker.h"
#include "sources/syslog/charset.h"

namespace sluice::syslog {

class SyslogFormatFactory final : public pipeline::EventFormatFactory {
 public:
  // `charsets`: by port index; `event_size`: the longest frame kept (eventSize).
  SyslogFormatFactory(uint8_t keep_fields, size_t event_size, std::vector<Charset> charsets);
  std::unique_ptr<pipeline::EventFormat> make() const override;
  uint64_t max_event_bytes() const override;

 private:
  const uint8_t keep_fields_;
  const size_t event_size_;
  const std::vector<Charset> charsets_;
};

}  // namespace sluice::syslog
