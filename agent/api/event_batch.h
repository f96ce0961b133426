#pragma once
// Events never travel alone: a source appends them to an EventBatch, the channel moves
// whole batches, and a sink hands a batch's bytes to Kafka without copying them.
//
// Ownership: the builder owns its storage until seal(); after that the bytes and records are
// immutable and shared (shared_ptr) by every EventBatch cut from them, so a sink can keep a
// batch alive until Kafka's delivery reports while the channel has already moved on.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/api/deadline.h"
#include "agent/api/event_fields.h"
#include "agent/api/event_headers.h"

namespace sluice {

enum class EventStatus : uint8_t {
  ok = 0,
  invalid = 1,     // did not parse as syslog: kept whole, Flume's "Invalid"
  incomplete = 2,  // truncated at the source's eventSize: Flume's "Incomplete"
};

// A field inside an event's frame: offset relative to the frame's start; length 0 = absent.
struct Span {
  uint16_t offset = 0;
  uint16_t length = 0;
};

// One event: where its bytes lie in its batch's buffer (the frame as it came, its body, what was
// appended for it), where it came from, and what the syslog parser found in it. An event is a
// body and headers (event_fields.h): a syslog event's parsed fields are headers; an event of a
// batch of another kind (EventStorage::kind: Flume's event) leaves them unset, and its headers
// are its header block. Its bytes are the spill's record layout (batch_codec.h): a change of
// size or order is a new layout, which segments written before it are refused by.
struct EventRecord {
  // The event
  uint32_t offset = 0;  // the received frame, without its terminator
  uint32_t length = 0;
  uint32_t body_offset = 0;  // the body (Flume's: the line without the header fields that
  uint32_t body_length = 0;  // keepFields drops), relative to offset; may lie past the frame
  // A syslog event's parsed fields (EventKind::syslog)
  Span host;                    // HOSTNAME
  Span app;                     // APP-NAME / the RFC 3164 TAG without [pid] and ':'
  Span procid;                  // PROCID / the RFC 3164 TAG's [pid]
  Span msgid;                   // RFC 5424 MSGID
  Span structured_data;         // RFC 5424 STRUCTURED-DATA, brackets included
  uint32_t message_offset = 0;  // MSG (after the TAG, or STRUCTURED-DATA and a BOM) to the end
  // Where it came from (any event)
  uint32_t client_offset = 0;  // relative to offset, past the frame: client IP then hostname
  uint8_t client_ip_length = 0;
  uint8_t client_host_length = 0;
  uint16_t port = 0;  // local port it arrived on
  // A syslog event's parsed fields
  uint8_t facility = 1;  // RFC 3164: a line without PRI is user.notice (1, 5)
  uint8_t severity = 5;
  EventStatus status = EventStatus::ok;
  uint8_t version = 0;  // 1 for RFC 5424, 0 otherwise
  bool timestamp_from_header = false;
  int64_t timestamp_ms = 0;  // from the header when present, else the time it was received
};
// The spill's record layout (batch_codec.h) is these bytes: kept, so that segments written by an
// earlier build are read.
static_assert(sizeof(EventRecord) == 64 && offsetof(EventRecord, client_offset) == 40 &&
              offsetof(EventRecord, facility) == 48 && offsetof(EventRecord, timestamp_ms) == 56);

// Told which events of a stored batch were committed downstream, by every channel commit of
// any slice of it: how a disk-backed channel knows when a record on disk may go, and which
// part of a record need not be delivered again after a restart.
class CommitTracker {
 public:
  virtual ~CommitTracker() = default;
  // Events [first, first + count) of the storage (EventBatch::first()), each committed once.
  virtual void committed(size_t first, size_t count) = 0;
};

struct EventStorage {
  std::vector<char> bytes;
  std::vector<EventRecord> events;
  // Per event, where the headers interceptors set lie (event_headers.h); empty while no event
  // of the storage has any, shorter than `events` when the last ones have none.
  std::vector<HeaderBlock> headers;
  std::shared_ptr<const HeaderNames> header_names;
  EventKind kind = EventKind::syslog;  // what its events are (event_fields.h)
  // The only names its header blocks set or remove (the source's interceptors say which); null:
  // any (not known, or read back from disk).
  std::shared_ptr<const std::vector<std::string>> header_block_names;
  std::shared_ptr<CommitTracker> tracker;  // set by a channel that must hear of commits
  // Set by a source that acknowledges to its sender (RELP, once the events are committed):
  // told of each commit of any slice, by every channel. A channel that re-encodes a batch (a
  // spill to disk) carries it over, with `acknowledger_base` = the acknowledger's index of this
  // storage's event 0. Not carried across a restart: the sender's connection is gone by then.
  std::shared_ptr<CommitTracker> acknowledger;
  size_t acknowledger_base = 0;
  // When its first event arrived (the builder's first append): where the pipeline's latency
  // starts. Unknown (the epoch) for events replayed from disk after a restart.
  Clock::time_point arrived_at{};
};

// What a channel that re-encodes a batch (a spill to disk) keeps beside the record for the
// batch it reads back: the source's acknowledger with its index of the batch's event 0 (null if
// the source acknowledges nothing), and when the batch arrived.
struct BatchOrigin {
  std::shared_ptr<CommitTracker> acknowledger;
  size_t acknowledger_base = 0;
  Clock::time_point arrived_at{};
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
    answers_ = other.answers_;
    return *this;
  }

  size_t size() const { return end_ - begin_; }
  // The index of its first event among its storage's events (0 unless it is a slice).
  size_t first() const { return begin_; }
  bool empty() const { return begin_ == end_; }
  // The bytes its events occupy in their storage: their frames and what parsing appended to them
  // (a composed body, the client's address and name). What channels count against byteCapacity.
  uint64_t bytes() const { return bytes_; }

  const EventRecord* begin() const { return storage_->events.data() + begin_; }
  const EventRecord* end() const { return storage_->events.data() + end_; }
  const EventRecord& operator[](size_t i) const { return storage_->events[begin_ + i]; }

  std::string_view raw(const EventRecord& e) const { return {storage_->bytes.data() + e.offset, e.length}; }
  std::string_view body(const EventRecord& e) const {
    return {storage_->bytes.data() + e.offset + e.body_offset, e.body_length};
  }
  std::string_view text(const EventRecord& e, Span span) const {
    return {storage_->bytes.data() + e.offset + span.offset, span.length};
  }
  std::string_view message(const EventRecord& e) const {
    return {storage_->bytes.data() + e.offset + e.message_offset, e.length - e.message_offset};
  }
  std::string_view client_ip(const EventRecord& e) const {
    return {storage_->bytes.data() + e.offset + e.client_offset, e.client_ip_length};
  }
  std::string_view client_host(const EventRecord& e) const {
    return {storage_->bytes.data() + e.offset + e.client_offset + e.client_ip_length, e.client_host_length};
  }
  const HeaderNames* header_names() const { return storage_ ? storage_->header_names.get() : nullptr; }
  // True if an interceptor rewrote the event's body (search_replace): its message is the body.
  bool body_rewritten(const EventRecord& e) const {
    const size_t index = static_cast<size_t>(&e - storage_->events.data());
    return index < storage_->headers.size() && storage_->headers[index].body_rewritten;
  }
  // The headers interceptors set on the event (event_headers.h): empty if none.
  std::string_view header_block(const EventRecord& e) const {
    const size_t index = static_cast<size_t>(&e - storage_->events.data());
    if (index >= storage_->headers.size()) return {};
    const HeaderBlock& block = storage_->headers[index];
    return {storage_->bytes.data() + e.offset + block.offset, block.length};
  }
  EventKind kind() const { return storage_ ? storage_->kind : EventKind::syslog; }
  // The event's headers (event_fields.h): what a sink, the JSON format and Flume's event read.
  EventHeaders headers(const EventRecord& e) const {
    return {storage_->bytes.data() + e.offset, e, storage_->kind, header_block(e), header_names()};
  }
  // The event's header as a sink reads it (EventHeaders::get): numbers formatted into `scratch`
  // (at least 24 bytes); nullopt if it has none or an interceptor removed it.
  std::optional<std::string_view> header(const EventRecord& e, std::string_view name, char* scratch) const;
  std::optional<std::string_view> header(const EventRecord& e, const HeaderRef& ref, char* scratch) const {
    return headers(e).get(ref, scratch);
  }
  // False when no event of this batch can have the header: none has a header block, and it
  // names neither a field its kind of event has nor one of the source's header names (a sink
  // skips the lookups).
  bool may_have(const HeaderRef& ref) const;
  // Every header of the event, as Flume's event would carry it (EventHeaders::all). For the JSON
  // format and Flume's Avro event.
  std::vector<std::pair<std::string, std::string>> all_headers(const EventRecord& e) const { return headers(e).all(); }
  CommitTracker* tracker() const { return storage_ ? storage_->tracker.get() : nullptr; }
  // What a channel calls when it commits this batch: the source's acknowledger hears of it
  // (unless this batch is a copy that answers nobody: without_acknowledger()).
  void report_commit() const {
    if (answers_ && storage_ && storage_->acknowledger)
      storage_->acknowledger->committed(storage_->acknowledger_base + begin_, end_ - begin_);
  }
  // For a channel that re-encodes the batch (BatchOrigin).
  BatchOrigin origin() const {
    if (!storage_) return {};
    if (!answers_ || !storage_->acknowledger) return {nullptr, 0, storage_->arrived_at};
    return {storage_->acknowledger, storage_->acknowledger_base + begin_, storage_->arrived_at};
  }
  Clock::time_point arrived_at() const { return storage_ ? storage_->arrived_at : Clock::time_point{}; }
  const EventStorage* storage() const { return storage_.get(); }

  // All events of `storage` as one batch (a channel re-reading what it stored).
  static EventBatch of(std::shared_ptr<const EventStorage> storage);

  // The field's text (EventHeaders::field), empty if the event has none; numeric fields are
  // formatted into `scratch` (at least 24 bytes).
  std::string_view field(const EventRecord& e, EventField f, char* scratch) const {
    return headers(e).field(f, scratch).value_or(std::string_view());
  }
  // A syslog event's numeric fields (timestamp in ms); -1 for text fields.
  static int64_t numeric_field(const EventRecord& e, EventField f);

  // Moves the first n events into a new batch that shares this one's storage.
  EventBatch split_front(size_t n);
  // Events [first, first + count) as a new batch sharing this one's storage.
  EventBatch slice(size_t first, size_t count) const;
  // This batch for another channel to hold: a copy of its storage without the tracker of the
  // channel that read it from disk (that channel hears of it once, when it lets it go), or the
  // batch itself if it has none.
  EventBatch without_tracker() const;
  // This batch, sharing its storage, as a copy whose commits tell the source's acknowledger
  // nothing: for a channel whose events moved on, or an optional channel (channel_selector.h),
  // whose commit must not tell the sender they are stored. Its slices are such copies too.
  EventBatch without_acknowledger() const {
    EventBatch copy = *this;
    copy.answers_ = false;
    return copy;
  }

 private:
  friend class EventBatchBuilder;
  // This batch on a copy of its storage, changed by `change`.
  template <typename Change>
  EventBatch with_storage_copy(Change change) const;
  std::shared_ptr<const EventStorage> storage_;
  size_t begin_ = 0;
  size_t end_ = 0;
  uint64_t bytes_ = 0;
  bool answers_ = true;  // its commits reach the storage's acknowledger
};

// A sealed batch whose events a channel selector sent different ways (channel_selector.h): a
// part per route, each its route's events in the order they arrived (empty if none took it).
// Taken one after the other, route by route, the parts are the batch in "sealed order": what
// their commits report to the source's acknowledger (each part's storage has its base there).
struct RoutedBatch {
  std::vector<EventBatch> parts;
  // When that order is not the order they arrived in (they took more than one route): the
  // builder's index of each event (what an acknowledger registered them by), in sealed order;
  // empty when it is.
  std::vector<uint32_t> original_index;
};

// Appends events into one growing buffer; owned by one source thread. Each new buffer is
// reserved at the size the previous batch reached (a little more), so that a channel full of
// small batches does not hold the reservations of large ones.
class EventBatchBuilder {
 public:
  explicit EventBatchBuilder(size_t expected_events = 0, size_t expected_bytes = 0);

  // Copies the frame in and returns its record for the parser to fill in. An event is made by
  // append(), what fills it in (append_to_last, set_last_headers, drop_last), and last
  // set_last_route(): after that, last() and the others that name "the last event" no longer
  // mean it.
  EventRecord& append(std::string_view frame);
  // Copies bytes that belong to the last appended event (a composed body, the client's
  // address) after it; returns their offset relative to that event's frame.
  uint32_t append_to_last(std::string_view bytes);
  // The last appended event's headers (event_headers.h), after all else appended for it, and
  // whether its body was rewritten. A second call adds to the first's (its entries later).
  void set_last_headers(std::string_view block, bool body_rewritten = false);
  // Takes the last appended event back out, with all appended for it (an interceptor filtered it).
  void drop_last();
  // The last appended event (after append()).
  EventRecord& last() { return storage_->events.back(); }
  const EventRecord& last() const { return storage_->events.back(); }
  // The last appended event's headers (event_fields.h): its fields, and its header block once
  // set_last_headers() gave it one. Interceptors read them as Flume's event carries them
  // (EventHeaders::flume), a selector as a sink does (EventHeaders::get).
  EventHeaders last_headers() const;
  const HeaderNames* header_names() const { return header_names_.get(); }
  // What the events appended from now on are (EventStorage::kind); syslog unless said.
  void set_kind(EventKind kind) {
    kind_ = kind;
    storage_->kind = kind;
  }
  EventKind kind() const { return kind_; }
  // What the batch's buffer holds of the last appended event (its frame and what followed it).
  std::string_view last_bytes() const {
    const EventRecord& e = storage_->events.back();
    return {storage_->bytes.data() + e.offset, storage_->bytes.size() - e.offset};
  }
  void set_header_names(std::shared_ptr<const HeaderNames> names) {
    header_names_ = std::move(names);
    parsed_query_.reset();
  }
  // What its batches' header blocks may name (EventStorage::header_block_names).
  const std::shared_ptr<const std::vector<std::string>>& header_block_names() const { return block_names_; }
  void set_header_block_names(std::shared_ptr<const std::vector<std::string>> names) {
    block_names_ = std::move(names);
    parsed_query_.reset();
  }
  // The batch being built reports its commits to `acknowledger` (EventStorage::acknowledger).
  void set_acknowledger(std::shared_ptr<CommitTracker> acknowledger);
  // The events appended so far (set aside for their routes or not).
  size_t size() const { return storage_->events.size() + aside_events_; }
  bool empty() const { return size() == 0; }
  // The bytes stored so far: frames and what was appended to them.
  uint64_t bytes() const { return storage_->bytes.size() + aside_bytes_; }

  // Hands the events over as an immutable batch and starts a new, empty one. Only while no event
  // took a route other than 0 (else seal_routed(); a logic_error otherwise).
  EventBatch seal();

  // The last appended event goes the way of route `route` (of a channel selector's; 0 for every
  // event of which nothing is said). An event of a route other than 0 moves at once into a
  // storage of its route's own (its bytes copied while they are hot): the batch is sealed into a
  // part per route without copying the others.
  void set_last_route(uint8_t route);
  uint8_t last_route() const { return routes_.size() == size() && !routes_.empty() ? routes_.back() : 0; }
  // Hands the events over as a part per route (of `routes`), and starts a new, empty batch.
  RoutedBatch seal_routed(size_t routes);
  // True when that header of the last appended event can only be its syslog field of Flume's
  // name (no header block may name it, nor the source's header names): a selector reads the
  // field itself.
  bool last_header_is_parsed(std::string_view name) const;

 private:
  // What a new storage is reserved for: a little more than the last one sealed held.
  struct Reservation {
    size_t events = 0;
    size_t bytes = 0;
  };
  // The storage of the events of route r > 0 (made when the first such event comes).
  struct AsideRoute {
    std::unique_ptr<EventStorage> storage;
    Reservation reservation;
  };
  // `storage` (left null) as a sealed batch, with the builder's header names; `reservation`
  // becomes what its successor is reserved for.
  EventBatch seal_storage(std::unique_ptr<EventStorage>& storage, Reservation& reservation) const;
  std::unique_ptr<EventStorage> new_storage(const Reservation& reservation) const;

  Reservation reservation_;                // declared before storage_: made with it
  EventKind kind_ = EventKind::syslog;     // so is this
  std::unique_ptr<EventStorage> storage_;  // route 0's events (every event, without a selector)
  std::vector<AsideRoute> aside_;          // by route; [0] unused
  Reservation aside_reserved_;             // what this batch's aside routes reserved together
  size_t aside_events_ = 0;
  uint64_t aside_bytes_ = 0;
  std::vector<uint8_t> routes_;  // per event, while a selector routes them (else empty)
  std::shared_ptr<const HeaderNames> header_names_;
  std::shared_ptr<const std::vector<std::string>> block_names_;
  // last_header_is_parsed()'s answer for the name last asked, but for the event's own block.
  struct ParsedQuery {
    std::string name;
    bool in_blocks;  // header blocks may name it
    bool by_source;  // one of the source's header names
  };
  mutable std::optional<ParsedQuery> parsed_query_;
};

}  // namespace sluice
