#pragma once
// Reads the syslog header of one frame in place: PRI, and where the message body starts
// (after the RFC 5424 header, or after an RFC 3164 timestamp and hostname). No allocation.
//
// A frame without a valid PRI is kept whole and marked invalid (Flume's "Invalid" status),
// with RFC 3164's default priority user.notice.

#include <string_view>

#include "channels/event_batch.h"

namespace sluice::syslog_tcp {

// Fills facility, severity, status and body_offset of `event` from `frame`.
void parse_syslog_header(std::string_view frame, EventRecord& event);

}  // namespace sluice::syslog_tcp
