#include "agent/api/event_fields.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "agent/api/event_batch.h"

namespace sluice {
namespace {

bool same_lowercase(std::string_view lower, std::string_view name) {
  return lower.size() == name.size() && std::equal(lower.begin(), lower.end(), name.begin(), [](char a, char b) {
           return a == static_cast<char>(std::tolower(static_cast<unsigned char>(b)));
         });
}

bool is_synonym(std::string_view synonyms, std::string_view lower) {
  while (!synonyms.empty()) {
    const size_t space = synonyms.find(' ');
    if (synonyms.substr(0, space) == lower) return true;
    if (space == std::string_view::npos) break;
    synonyms.remove_prefix(space + 1);
  }
  return false;
}

std::string_view number_text(int64_t value, char* scratch) {
  const auto [end, ec] = std::to_chars(scratch, scratch + 24, value);
  return {scratch, ec == std::errc() ? static_cast<size_t>(end - scratch) : 0};
}

std::optional<std::string_view> present(std::string_view text) {
  if (text.empty()) return std::nullopt;
  return text;
}

}  // namespace

const FieldRow& field_row(EventField f) {
  for (const FieldRow& row : kEventFields)
    if (row.field == f) return row;
  return kEventFields[0];  // EventField::none is asked of no row: never reached
}

std::optional<EventField> event_field_from_name(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const FieldRow& row : kEventFields)
    if (same_lowercase(lower, row.name) || is_synonym(row.synonyms, lower)) return row.field;
  return std::nullopt;
}

namespace {
// The field a source's header name (portHeader, clientIPHeader, clientHostnameHeader) stands for.
std::optional<EventField> source_field(std::string_view name, const HeaderNames* names) {
  if (!names || name.empty()) return std::nullopt;
  if (name == names->client_ip) return EventField::client_ip;
  if (name == names->client_host) return EventField::client_host;
  if (name == names->port) return EventField::port;
  return std::nullopt;
}
}  // namespace

std::optional<EventField> flume_header_field(std::string_view name, const HeaderNames* names) {
  if (name.empty()) return std::nullopt;
  if (const std::optional<EventField> f = source_field(name, names)) return f;
  for (const FieldRow& row : kEventFields)
    if ((row.where & in_flume_event) && row.name == name) return row.field;
  return std::nullopt;
}

HeaderRef::HeaderRef(std::string n) : name(std::move(n)), field(event_field_from_name(name)) {}

std::optional<std::string_view> EventHeaders::field(EventField f, char* scratch) const {
  const EventRecord& e = e_;
  const auto text = [&](Span span) { return present({bytes_ + span.offset, span.length}); };
  switch (f) {  // where it came from: any event's
    case EventField::none: return std::nullopt;
    case EventField::port: return number_text(e.port, scratch);
    case EventField::client_ip: return present({bytes_ + e.client_offset, e.client_ip_length});
    case EventField::client_host: return present({bytes_ + e.client_offset + e.client_ip_length, e.client_host_length});
    default: break;
  }
  if (kind_ != EventKind::syslog) return std::nullopt;  // its headers are its block's
  switch (f) {
    case EventField::timestamp: return number_text(e.timestamp_ms, scratch);
    case EventField::facility: return number_text(e.facility, scratch);
    case EventField::severity: return number_text(e.severity, scratch);
    case EventField::priority:
      if (e.status == EventStatus::invalid) return std::nullopt;  // the line had none
      return number_text(e.facility * 8 + e.severity, scratch);
    case EventField::status:
      if (e.status == EventStatus::ok) return std::nullopt;
      return e.status == EventStatus::invalid ? "Invalid" : "Incomplete";
    case EventField::version:
      if (e.version == 0) return std::nullopt;
      return number_text(e.version, scratch);
    case EventField::host: return text(e.host);
    case EventField::app: return text(e.app);
    case EventField::procid: return text(e.procid);
    case EventField::msgid: return text(e.msgid);
    case EventField::structured_data: return text(e.structured_data);
    default: return std::nullopt;
  }
}

std::optional<std::string_view> EventHeaders::flume(std::string_view name, char* scratch) const {
  if (!block_.empty())
    if (const std::optional<HeaderEntry> set = last_entry(block_, name))
      return set->removed ? std::nullopt : std::optional<std::string_view>(set->value);
  const std::optional<EventField> f = flume_header_field(name, names_);
  return f ? field(*f, scratch) : std::nullopt;
}

std::optional<std::string_view> EventHeaders::get(const HeaderRef& ref, char* scratch) const {
  if (!block_.empty())
    if (const std::optional<HeaderEntry> set = last_entry(block_, ref.name))
      return set->removed ? std::nullopt : std::optional<std::string_view>(set->value);
  // A field's exact Flume name is among the names `ref.field` was resolved from, once.
  std::optional<EventField> f = source_field(ref.name, names_);
  if (!f) f = ref.field;
  return f ? field(*f, scratch) : std::nullopt;
}

std::vector<std::pair<std::string, std::string>> EventHeaders::all() const {
  std::vector<std::pair<std::string, std::string>> out;
  auto put = [&](std::string_view name, std::string_view value) {
    for (auto& [n, v] : out)
      if (n == name) {
        v = value;
        return;
      }
    out.emplace_back(name, value);
  };
  // The fields first, whatever the block says of them: a block's later word replaces them in place.
  const EventHeaders fields_only(bytes_, e_, kind_, {}, names_);
  fields_only.for_each_field(in_flume_event,
                             [&](std::string_view name, std::string_view value, bool) { put(name, value); });
  HeaderReader reader(block_);
  for (HeaderEntry entry; reader.next(entry);) {
    if (!entry.removed) {
      put(entry.name, entry.value);
      continue;
    }
    std::erase_if(out, [&](const auto& header) { return header.first == entry.name; });
  }
  return out;
}

}  // namespace sluice
