#pragma once
// One event as one JSON object: every field the source parsed, with Flume's header names
// where Flume has them ("Facility", "Severity", "timestamp", "host", "flume.syslog.status"),
// plus the message. Fields the line did not have are left out. Bytes that are not UTF-8
// (charset none) are written as U+FFFD so that the output is always valid JSON.
//
//   {"timestamp":1764504426000,"Facility":16,"Severity":6,"host":"web1","app":"sshd",
//    "procid":"12","message":"Accepted publickey"}

#include <string>

#include "agent/api/event_batch.h"

namespace sluice {

// Appends the event's JSON object to `out`.
void append_event_json(const EventBatch& batch, const EventRecord& e, std::string& out);

}  // namespace sluice
