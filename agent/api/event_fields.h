#pragma once
// The one table of an event's fields as headers, and the one view every reader of an event's
// headers goes through (EventHeaders): the batch builder for interceptors and selectors, a sink's
// keys, topics and kafka.headers, the JSON format and Flume's Avro event. So `selector.header =
// app` reads what a sink's `topicHeader = app` reads, and the JSON format and Flume's event write
// the same names.
//
// An event is a body and headers. Its headers are what its header block says (interceptors, or
// the headers a sender's Flume event came with), over its fields: those the syslog parser found
// (a syslog event's), and where it came from (port, client address and name: any event's).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/api/event_headers.h"

namespace sluice {

struct EventRecord;
struct HeaderNames;

// What a batch's events are (EventStorage::kind): syslog lines whose parsed fields are headers,
// or events that are a body and the headers they came with (Flume's event), whose syslog fields
// are left unset and never read.
enum class EventKind : uint8_t { syslog = 0, plain = 1 };

// An event's fields that are headers.
enum class EventField : uint8_t {
  none,
  timestamp,
  facility,
  severity,
  priority,  // the PRI: absent in a line without one
  status,    // Flume's flume.syslog.status: Invalid or Incomplete, absent when the line parsed
  version,   // RFC 5424's VERSION: absent in an RFC 3164 line
  host,
  app,
  procid,
  msgid,
  structured_data,
  port,
  client_ip,
  client_host,
};

// When an event has the field.
enum class FieldPresence : uint8_t {
  always,        // every syslog event
  when_written,  // a text field the line had (not empty)
  when_parsed,   // the line parsed (priority)
  when_rfc5424,  // version
  when_not_ok,   // flume.syslog.status
  when_origin,   // port, client address and name: under the source's header names (portHeader ...)
};

// Where a field's header appears beside the readers that ask for it by name.
enum FieldUse : uint8_t {
  in_flume_event = 1,  // a header of Flume's event (interceptors, all_headers, Flume's Avro event)
  in_json = 2,         // a key of the JSON format
};

struct FieldRow {
  EventField field;
  std::string_view name;      // Flume's header name (the JSON key)
  std::string_view synonyms;  // other names a property may use (lowercase, space-separated)
  FieldPresence presence;
  bool number;    // written as a number
  uint8_t where;  // FieldUse bits
};

// In the order Flume's event and the JSON format write them.
// clang-format off
inline constexpr FieldRow kEventFields[] = {
  {EventField::timestamp,       "timestamp",           "",                             FieldPresence::always,       true,  in_flume_event | in_json},
  {EventField::facility,        "Facility",            "",                             FieldPresence::always,       true,  in_flume_event | in_json},
  {EventField::severity,        "Severity",            "",                             FieldPresence::always,       true,  in_flume_event | in_json},
  {EventField::priority,        "priority",            "",                             FieldPresence::when_parsed,  true,  in_flume_event},
  {EventField::status,          "flume.syslog.status", "",                             FieldPresence::when_not_ok,  false, in_flume_event | in_json},
  {EventField::version,         "version",             "",                             FieldPresence::when_rfc5424, true,  in_flume_event | in_json},
  {EventField::host,            "host",                "hostname",                     FieldPresence::when_written, false, in_flume_event | in_json},
  {EventField::app,             "app",                 "appname program",              FieldPresence::when_written, false, in_json},
  {EventField::procid,          "procid",              "pid",                          FieldPresence::when_written, false, in_json},
  {EventField::msgid,           "msgid",               "",                             FieldPresence::when_written, false, in_json},
  {EventField::structured_data, "structured_data",     "",                             FieldPresence::when_written, false, in_json},
  {EventField::port,            "port",                "",                             FieldPresence::when_origin,  true,  0},
  {EventField::client_ip,       "clientIP",            "client_ip",                    FieldPresence::when_origin,  false, 0},
  {EventField::client_host,     "clientHostname",      "client_hostname",              FieldPresence::when_origin,  false, 0},
};
// clang-format on

const FieldRow& field_row(EventField f);

// The field a property's header name means: a row's name or synonym, in any case; nullopt for
// anything else.
std::optional<EventField> event_field_from_name(std::string_view name);

// The field a row's exact name gives it as Flume's event carries it (in_flume_event), or the
// source's header names give (portHeader, clientIPHeader, clientHostnameHeader).
std::optional<EventField> flume_header_field(std::string_view name, const HeaderNames* names);

// A header name a sink or selector reads (keyField, topicHeader, kafka.headers, selector.header),
// resolved once: the field it names, if any (event_field_from_name), so that a batch none of
// whose events has a header block finds it without comparing names.
struct HeaderRef {
  std::string name;
  std::optional<EventField> field;
  HeaderRef() = default;
  explicit HeaderRef(std::string n);
  bool empty() const { return name.empty(); }
};

// What the source named the optional per-event headers (Flume's portHeader, clientIPHeader,
// clientHostnameHeader); empty names are not emitted. Shared by every batch of the source.
struct HeaderNames {
  std::string port;
  std::string client_ip;
  std::string client_host;
};

// One event's headers: its fields (the table above) under its header block.
class EventHeaders {
 public:
  // `bytes`: the event's frame's start in its batch's buffer; `block`: its header block (empty:
  // none, or one not made yet).
  EventHeaders(const char* bytes, const EventRecord& e, EventKind kind, std::string_view block,
               const HeaderNames* names)
      : bytes_(bytes), e_(e), kind_(kind), block_(block), names_(names) {}

  // The field's value if the event has it (FieldPresence); numbers are formatted into `scratch`
  // (at least 24 bytes).
  std::optional<std::string_view> field(EventField f, char* scratch) const;
  // The header `name` as Flume's event carries it (an interceptor's view): the block's last word
  // on it, else a field of that exact name (in_flume_event) or of the source's header names.
  std::optional<std::string_view> flume(std::string_view name, char* scratch) const;
  // As a sink or selector reads it: flume(name), else the field the name means in any spelling
  // (HeaderRef), unless the block removed that name.
  std::optional<std::string_view> get(const HeaderRef& ref, char* scratch) const;
  // Every header as Flume's event carries it: the fields (in_flume_event, table order), those
  // under the source's names, then the block's, a later value replacing an earlier one in place
  // and a removed header gone.
  std::vector<std::pair<std::string, std::string>> all() const;
  // The fields a writer wants (`where`), each once, in table order then the source's names: as
  // (name, value, number). A field the block mentions (set or removed) is left to the block.
  template <class Write>
  void for_each_field(uint8_t where, Write&& write) const;
  std::string_view block() const { return block_; }

 private:
  const char* bytes_;
  const EventRecord& e_;
  const EventKind kind_;
  const std::string_view block_;
  const HeaderNames* names_;
};

template <class Write>
void EventHeaders::for_each_field(uint8_t where, Write&& write) const {
  char scratch[24];
  const auto mentioned = [&](std::string_view name) { return !block_.empty() && last_entry(block_, name); };
  for (const FieldRow& row : kEventFields) {
    if (!(row.where & where) || mentioned(row.name)) continue;
    if (const std::optional<std::string_view> value = field(row.field, scratch)) write(row.name, *value, row.number);
  }
  if (!names_) return;
  for (const auto& [name, f] :
       {std::pair{&names_->port, EventField::port}, std::pair{&names_->client_ip, EventField::client_ip},
        std::pair{&names_->client_host, EventField::client_host}}) {
    if (name->empty() || mentioned(*name)) continue;
    if (const std::optional<std::string_view> value = field(f, scratch)) write(*name, *value, field_row(f).number);
  }
}

}  // namespace sluice
