#pragma once
// Events never travel alone: a source appends them to an EventBatch, the channel moves
// whole batches, and a sink hands a batch's bytes to Kafka without copying them.
//
// Ownership: the builder owns its storage until seal(); after that the bytes and records are
// immutable and shared (shared_ptr) by every EventBatch cut from them, so a sink can keep a
// batch alive until Kafka's delivery reports while the channel has already moved on.

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

enum class EventStatus : uint8_t {
  ok = 0,
  invalid = 1,     // did not parse as syslog: kept whole, Flume's "Invalid"
  incomplete = 2,  // truncated at the source's eventSize: Flume's "Incomplete"
};

// One event: offsets into its batch's buffer plus the fields the source parsed.
struct EventRecord {
  uint32_t offset = 0;       // the received frame, without its terminator
  uint32_t length = 0;
  uint32_t body_offset = 0;  // where the message body starts, relative to offset
  uint16_t port = 0;         // local port it arrived on
  uint8_t facility = 1;      // RFC 3164: a line without PRI is user.notice (1, 5)
  uint8_t severity = 5;
  EventStatus status = EventStatus::ok;
  uint16_t host_offset = 0;  // HOSTNAME, relative to offset; length 0 when absent
  uint16_t host_length = 0;
  uint16_t app_offset = 0;   // APP-NAME / the RFC 3164 TAG without [pid] and ':'
  uint16_t app_length = 0;
  int64_t timestamp_ms = 0;  // from the header when present, else the time it was received
};

// The parsed fields a sink can route by (Flume's header names where Flume has one).
enum class EventField : uint8_t { none, host, app, facility, severity, port };
// "host", "app", "Facility", "Severity", "port" (any case); nullopt for anything else.
std::optional<EventField> event_field_from_name(std::string_view name);

struct EventStorage {
  std::vector<char> bytes;
  std::vector<EventRecord> events;
};

class EventBatch {
 public:
  EventBatch() = default;
  EventBatch(const EventBatch&) = default;
  EventBatch& operator=(const EventBatch&) = default;
  // A moved-from batch is empty (not merely storage-less), so `empty()` stays truthful.
  EventBatch(EventBatch&& other) noexcept { *this = std::move(other); }
  EventBatch& operator=(EventBatch&& other) noexcept {
    storage_ = std::move(other.storage_);
    begin_ = std::exchange(other.begin_, 0);
    end_ = std::exchange(other.end_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    return *this;
  }

  size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }
  uint64_t bytes() const { return bytes_; }

  const EventRecord* begin() const { return storage_->events.data() + begin_; }
  const EventRecord* end() const { return storage_->events.data() + end_; }
  const EventRecord& operator[](size_t i) const { return storage_->events[begin_ + i]; }

  std::string_view raw(const EventRecord& e) const {
    return {storage_->bytes.data() + e.offset, e.length};
  }
  std::string_view body(const EventRecord& e) const {
    return {storage_->bytes.data() + e.offset + e.body_offset, e.length - e.body_offset};
  }

  // The field's text; numeric fields are formatted into `scratch` (at least 8 bytes).
  std::string_view field(const EventRecord& e, EventField f, char* scratch) const;
  // Numeric fields only; -1 for text fields.
  static int32_t numeric_field(const EventRecord& e, EventField f);

  // Moves the first n events into a new batch that shares this one's storage.
  EventBatch split_front(size_t n);
  // Events [first, first + count) as a new batch sharing this one's storage.
  EventBatch slice(size_t first, size_t count) const;

 private:
  friend class EventBatchBuilder;
  std::shared_ptr<const EventStorage> storage_;
  size_t begin_ = 0;
  size_t end_ = 0;
  uint64_t bytes_ = 0;
};

// Appends events into one growing buffer; owned by one source thread. Each new buffer is
// reserved at the size the previous batch reached (a little more), so that a channel full of
// small batches does not hold the reservations of large ones.
class EventBatchBuilder {
 public:
  explicit EventBatchBuilder(size_t expected_events = 0, size_t expected_bytes = 0);

  // Copies the frame in and returns its record for the parser to fill in.
  EventRecord& append(std::string_view frame);
  size_t size() const { return storage_->events.size(); }
  bool empty() const { return storage_->events.empty(); }
  uint64_t bytes() const { return bytes_; }

  // Hands the events over as an immutable batch and starts a new, empty one.
  EventBatch seal();

 private:
  std::unique_ptr<EventStorage> storage_;
  uint64_t bytes_ = 0;
  size_t expected_events_;
  size_t expected_bytes_;
};

}  // namespace sluice
