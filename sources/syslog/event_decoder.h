#pragma once
// What a syslog source does with each frame it cuts, in one place (syslog's EventFormat,
// syslog_format.h, and the parse benchmark share it): re-encode to UTF-8 if the charset asks,
// copy into the batch, parse the header, apply the Incomplete status and keepFields. Where the
// event came from is stamped after (pipeline::EventMaker).

#include <string>
#include <string_view>

#include "agent/api/event_batch.h"
#include "sources/pipeline/message_traits.h"
#include "sources/syslog/charset.h"
#include "sources/syslog/syslog_parser.h"

namespace sluice::syslog {

// Header fields that keepFields keeps in the body (Flume's names).
enum KeepField : uint8_t {
  keep_priority = 1,
  keep_version = 2,
  keep_timestamp = 4,
  keep_hostname = 8,
  keep_all = 15,
};

class EventDecoder {
 public:
  explicit EventDecoder(uint8_t keep_fields) : keep_fields_(keep_fields) {}

  // Appends the event to `builder` and returns it; counts an event whose invalid UTF-8 was
  // replaced into invalid_utf8. A frame its framer found ASCII is checked no more.
  EventRecord& decode(std::string_view frame, pipeline::MessageTraits traits, Charset charset, const ParseClock& clock,
                      EventBatchBuilder& builder, uint64_t& invalid_utf8) {
    if (!traits.ascii && needs_conversion(charset, frame)) {
      if (convert_to_utf8(charset, frame, converted_) > 0) ++invalid_utf8;
      frame = converted_;
    }
    EventRecord& e = builder.append(frame);
    const bool compose = keep_fields_ != 0 && keep_fields_ != keep_all;
    HeaderLayout layout;
    parse_syslog(frame, clock, e, compose ? &layout : nullptr);
    if (traits.truncated) e.status = EventStatus::incomplete;
    if (keep_fields_ == keep_all) {
      e.body_offset = 0;
      e.body_length = e.length;
    } else if (compose && e.status != EventStatus::invalid) {
      keep_header_fields(frame, layout, e, builder);
    }
    return e;
  }

 private:
  // Some of priority/version/timestamp/hostname kept: the body is those fields, in their
  // order and spelling, then the usual body; written after the frame.
  void keep_header_fields(std::string_view frame, const HeaderLayout& layout, EventRecord& e,
                          EventBatchBuilder& builder) {
    composed_.clear();
    if (keep_fields_ & keep_priority) composed_.append(frame.substr(0, layout.pri_end));
    for (const auto& [bit, span] :
         {std::pair{keep_version, layout.version}, std::pair{keep_timestamp, layout.timestamp},
          std::pair{keep_hostname, layout.hostname}})
      if ((keep_fields_ & bit) && span.length) composed_.append(frame.substr(span.offset, span.length));
    composed_.append(frame.substr(e.body_offset, e.body_length));
    e.body_offset = builder.append_to_last(composed_);
    e.body_length = static_cast<uint32_t>(composed_.size());
  }

  const uint8_t keep_fields_;
  std::string converted_;  // a frame re-encoded as UTF-8
  std::string composed_;   // a body composed for keepFields
};

}  // namespace sluice::syslog
