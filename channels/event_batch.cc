#include "channels/event_batch.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <utility>

namespace sluice {

std::optional<EventField> event_field_from_name(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "host" || lower == "hostname") return EventField::host;
  if (lower == "app" || lower == "appname" || lower == "program") return EventField::app;
  if (lower == "facility") return EventField::facility;
  if (lower == "severity") return EventField::severity;
  if (lower == "port") return EventField::port;
  return std::nullopt;
}

int32_t EventBatch::numeric_field(const EventRecord& e, EventField f) {
  switch (f) {
    case EventField::facility: return e.facility;
    case EventField::severity: return e.severity;
    case EventField::port: return e.port;
    default: return -1;
  }
}

std::string_view EventBatch::field(const EventRecord& e, EventField f, char* scratch) const {
  const char* base = storage_->bytes.data() + e.offset;
  switch (f) {
    case EventField::host: return {base + e.host_offset, e.host_length};
    case EventField::app: return {base + e.app_offset, e.app_length};
    case EventField::none: return {};
    default: {
      const auto [end, ec] = std::to_chars(scratch, scratch + 8, numeric_field(e, f));
      return {scratch, ec == std::errc() ? static_cast<size_t>(end - scratch) : 0};
    }
  }
}

EventBatch EventBatch::split_front(size_t n) {
  if (n >= size()) return std::exchange(*this, EventBatch{});
  EventBatch front;
  front.storage_ = storage_;
  front.begin_ = begin_;
  front.end_ = begin_ + n;
  for (const EventRecord& e : front) front.bytes_ += e.length;
  begin_ += n;
  bytes_ -= front.bytes_;
  return front;
}

EventBatch EventBatch::slice(size_t first, size_t count) const {
  EventBatch part;
  part.storage_ = storage_;
  part.begin_ = begin_ + std::min(first, size());
  part.end_ = part.begin_ + std::min(count, end_ - part.begin_);
  for (const EventRecord& e : part) part.bytes_ += e.length;
  return part;
}

EventBatchBuilder::EventBatchBuilder(size_t expected_events, size_t expected_bytes)
    : storage_(std::make_unique<EventStorage>()),
      expected_events_(expected_events),
      expected_bytes_(expected_bytes) {
  storage_->events.reserve(expected_events_);
  storage_->bytes.reserve(expected_bytes_);
}

EventRecord& EventBatchBuilder::append(std::string_view frame) {
  auto& bytes = storage_->bytes;
  const size_t offset = bytes.size();
  bytes.insert(bytes.end(), frame.begin(), frame.end());
  bytes_ += frame.size();
  EventRecord& e = storage_->events.emplace_back();
  e.offset = static_cast<uint32_t>(offset);
  e.length = static_cast<uint32_t>(frame.size());
  return e;
}

EventBatch EventBatchBuilder::seal() {
  EventBatch batch;
  batch.begin_ = 0;
  batch.end_ = storage_->events.size();
  batch.bytes_ = bytes_;
  expected_events_ = batch.end_ + batch.end_ / 4;
  expected_bytes_ = bytes_ + bytes_ / 4;
  batch.storage_ = std::shared_ptr<const EventStorage>(std::move(storage_));
  storage_ = std::make_unique<EventStorage>();
  storage_->events.reserve(expected_events_);
  storage_->bytes.reserve(expected_bytes_);
  bytes_ = 0;
  return batch;
}

}  // namespace sluice
