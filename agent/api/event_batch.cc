#include "agent/api/event_batch.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace sluice {

int64_t EventBatch::numeric_field(const EventRecord& e, EventField f) {
  switch (f) {
    case EventField::facility: return e.facility;
    case EventField::severity: return e.severity;
    case EventField::port: return e.port;
    case EventField::timestamp: return e.timestamp_ms;
    case EventField::priority: return e.facility * 8 + e.severity;
    case EventField::version: return e.version;
    default: return -1;
  }
}

std::optional<std::string_view> EventBatch::header(const EventRecord& e, std::string_view name, char* scratch) const {
  return header(e, HeaderRef(std::string(name)), scratch);
}

namespace {
// True when `name` is one of the source's header names (portHeader, clientIPHeader, clientHostnameHeader).
bool names_by_source(const HeaderNames* names, std::string_view name) {
  return names && !name.empty() && (name == names->port || name == names->client_ip || name == names->client_host);
}

// False when header blocks of `storage` cannot name `name` (their names are known, and not it).
bool blocks_may_name(std::string_view name, const std::shared_ptr<const std::vector<std::string>>& names) {
  return !names || std::find(names->begin(), names->end(), name) != names->end();
}
}  // namespace

bool EventBatch::may_have(const HeaderRef& ref) const {
  if (!storage_) return false;
  if (!storage_->headers.empty() && blocks_may_name(ref.name, storage_->header_block_names)) return true;
  std::optional<EventField> f = flume_header_field(ref.name, header_names());
  if (!f) f = ref.field;
  if (!f) return false;
  const FieldPresence presence = field_row(*f).presence;
  return storage_->kind == EventKind::syslog || presence == FieldPresence::when_origin;
}

EventHeaders EventBatchBuilder::last_headers() const {
  const size_t index = storage_->events.size() - 1;
  const EventRecord& e = storage_->events.back();
  std::string_view block;
  if (index < storage_->headers.size())
    block = {storage_->bytes.data() + e.offset + storage_->headers[index].offset, storage_->headers[index].length};
  return {storage_->bytes.data() + e.offset, e, kind_, block, header_names_.get()};
}

// Events [begin, end)'s bytes in their storage: each event's frame is followed by what parsing
// appended for it (a composed body, the client's address and name), so the events of a range
// occupy one span.
static uint64_t stored_span(const EventStorage& storage, size_t begin, size_t end) {
  if (begin >= end) return 0;
  const size_t stop = end < storage.events.size() ? storage.events[end].offset : storage.bytes.size();
  return stop - storage.events[begin].offset;
}

EventBatch EventBatch::of(std::shared_ptr<const EventStorage> storage) {
  EventBatch batch;
  batch.end_ = storage->events.size();
  batch.bytes_ = stored_span(*storage, 0, batch.end_);
  batch.storage_ = std::move(storage);
  return batch;
}

EventBatch EventBatch::split_front(size_t n) {
  if (n >= size()) return std::exchange(*this, EventBatch{});
  EventBatch front;
  front.storage_ = storage_;
  front.begin_ = begin_;
  front.end_ = begin_ + n;
  front.bytes_ = stored_span(*storage_, front.begin_, front.end_);
  front.answers_ = answers_;
  begin_ += n;
  bytes_ -= front.bytes_;
  return front;
}

EventBatch EventBatch::slice(size_t first, size_t count) const {
  EventBatch part;
  part.storage_ = storage_;
  part.begin_ = begin_ + std::min(first, size());
  part.end_ = part.begin_ + std::min(count, end_ - part.begin_);
  part.bytes_ = stored_span(*storage_, part.begin_, part.end_);
  part.answers_ = answers_;
  return part;
}

template <typename Change>
EventBatch EventBatch::with_storage_copy(Change change) const {
  auto copy = std::make_shared<EventStorage>(*storage_);
  change(*copy);
  EventBatch batch = *this;
  batch.storage_ = std::move(copy);
  return batch;
}

EventBatch EventBatch::without_tracker() const {
  if (!tracker()) return *this;
  return with_storage_copy([](EventStorage& s) { s.tracker.reset(); });
}

EventBatchBuilder::EventBatchBuilder(size_t expected_events, size_t expected_bytes)
    : reservation_{expected_events, expected_bytes}, storage_(new_storage(reservation_)) {}

EventRecord& EventBatchBuilder::append(std::string_view frame) {
  if (empty()) storage_->arrived_at = Clock::now();  // one clock read per batch
  auto& bytes = storage_->bytes;
  const size_t offset = bytes.size();
  bytes.insert(bytes.end(), frame.begin(), frame.end());
  EventRecord& e = storage_->events.emplace_back();
  e.offset = static_cast<uint32_t>(offset);
  e.length = static_cast<uint32_t>(frame.size());
  e.body_length = e.length;
  return e;
}

uint32_t EventBatchBuilder::append_to_last(std::string_view extra) {
  auto& bytes = storage_->bytes;
  const uint32_t relative = static_cast<uint32_t>(bytes.size() - storage_->events.back().offset);
  bytes.insert(bytes.end(), extra.begin(), extra.end());
  return relative;
}

void EventBatchBuilder::set_last_headers(std::string_view block, bool body_rewritten) {
  if (block.empty() && !body_rewritten) return;
  const size_t index = storage_->events.size() - 1;
  std::string merged;
  if (index < storage_->headers.size()) {
    // It has a block already (the headers its sender's event came with): this one goes after
    // it, its entries overriding the earlier ones of the same name. (The first block's bytes
    // stay where they were, unused: an event's headers are set twice at most.)
    const HeaderBlock& had = storage_->headers[index];
    body_rewritten = body_rewritten || had.body_rewritten;
    if (had.length) {
      merged.assign(storage_->bytes.data() + storage_->events.back().offset + had.offset, had.length);
      merged += block;
      block = merged;
    }
  }
  const uint32_t offset = block.empty() ? 0 : append_to_last(block);
  const HeaderBlock header{offset, static_cast<uint32_t>(block.size()), body_rewritten ? 1u : 0u};
  if (storage_->headers.size() == index)  // every event has one (a chain that sets a header)
    storage_->headers.push_back(header);
  else {
    storage_->headers.resize(index + 1);
    storage_->headers[index] = header;
  }
}

void EventBatchBuilder::drop_last() {
  const size_t index = storage_->events.size() - 1;
  storage_->bytes.resize(storage_->events.back().offset);
  storage_->events.pop_back();
  if (storage_->headers.size() > index) storage_->headers.resize(index);
  if (routes_.size() >= size() + 1) routes_.resize(size());  // its route, if it had one
}

void EventBatchBuilder::set_last_route(uint8_t route) {
  const size_t arrival = size() - 1;
  // Once per event: a second call would move whichever event is last in route 0's storage.
  if (routes_.size() > arrival) throw std::logic_error("EventBatchBuilder::set_last_route() twice for an event");
  if (routes_.size() < arrival) routes_.resize(arrival, 0);  // those before it nothing was said of
  routes_.push_back(route);
  if (route == 0) return;
  // Into its route's storage: its frame, all appended for it, and its header block. Made when
  // the route's first event of a batch comes: a route that takes none holds no reservation.
  if (aside_.size() <= route) aside_.resize(route + 1u);
  AsideRoute& aside = aside_[route];
  if (!aside.storage) {
    // What the routes reserve together is at most what route 0 does (a little more than a batch):
    // a sender whose every batch is of another route does not make one batch hold a full
    // reservation per route (beyond it, a route's storage grows as it fills, as vectors do).
    const Reservation wanted{
        std::min(aside.reservation.events, reservation_.events - std::min(reservation_.events, aside_reserved_.events)),
        std::min(aside.reservation.bytes, reservation_.bytes - std::min(reservation_.bytes, aside_reserved_.bytes))};
    aside_reserved_.events += wanted.events;
    aside_reserved_.bytes += wanted.bytes;
    aside.storage = new_storage(wanted);
  }
  EventStorage& from = *storage_;
  EventStorage& to = *aside.storage;
  const size_t index = from.events.size() - 1;
  const EventRecord& e = from.events.back();
  const size_t length = from.bytes.size() - e.offset;
  EventRecord& moved = to.events.emplace_back(e);
  moved.offset = static_cast<uint32_t>(to.bytes.size());
  to.bytes.insert(to.bytes.end(), from.bytes.begin() + e.offset, from.bytes.end());
  if (index < from.headers.size()) {
    to.headers.resize(to.events.size() - 1);  // those before it that had none
    to.headers.push_back(from.headers[index]);
    from.headers.resize(index);
  }
  from.bytes.resize(e.offset);
  from.events.pop_back();
  ++aside_events_;
  aside_bytes_ += length;
}

bool EventBatchBuilder::last_header_is_parsed(std::string_view name) const {
  if (kind_ != EventKind::syslog) return false;
  const size_t index = storage_->events.size() - 1;
  // Asked per event with the same name: what does not depend on the event is worked out once.
  if (!parsed_query_ || parsed_query_->name != name)
    parsed_query_ =
        ParsedQuery{std::string(name), blocks_may_name(name, block_names_), names_by_source(header_names_.get(), name)};
  return !(index < storage_->headers.size() && parsed_query_->in_blocks) && !parsed_query_->by_source;
}

RoutedBatch EventBatchBuilder::seal_routed(size_t routes) {
  RoutedBatch routed;
  routed.parts.resize(std::max<size_t>(routes, 1));
  if (aside_events_ == 0) {  // every event in route 0's storage, in the order it arrived
    routes_.clear();
    routed.parts[0] = seal();
    return routed;
  }
  // Sealed order: route by route, each route's events in the order they arrived.
  const size_t events = size();
  routes_.resize(events, 0);  // events nothing was said of took route 0
  std::vector<uint32_t> starts(routed.parts.size() + 1, 0);
  for (const uint8_t route : routes_) {
    // A route the selector does not have: its events would stay aside into the next batch.
    if (route >= routed.parts.size()) throw std::logic_error("EventBatchBuilder::seal_routed(): a route out of range");
    ++starts[route + 1];
  }
  size_t routes_taken = 0;
  for (size_t r = 1; r < starts.size(); ++r) {
    routes_taken += starts[r] != 0;
    starts[r] += starts[r - 1];
  }
  if (routes_taken > 1) {  // else they lie in the order they arrived
    std::vector<uint32_t> next(starts.begin(), starts.end() - 1);
    routed.original_index.resize(events);
    for (uint32_t i = 0; i < events; ++i) routed.original_index[next[routes_[i]]++] = i;
  }
  routes_.clear();
  // Every part answers to the batch's acknowledger, from where its route starts in sealed order.
  const std::shared_ptr<CommitTracker> acknowledger = storage_->acknowledger;
  const Clock::time_point arrived_at = storage_->arrived_at;
  for (size_t r = 1; r < aside_.size() && r < routed.parts.size(); ++r) {
    AsideRoute& aside = aside_[r];
    if (!aside.storage || aside.storage->events.empty()) continue;
    aside.storage->acknowledger = acknowledger;
    aside.storage->acknowledger_base = starts[r];
    aside.storage->arrived_at = arrived_at;
    routed.parts[r] = seal_storage(aside.storage, aside.reservation);  // made again by its next event
  }
  aside_events_ = 0;
  aside_bytes_ = 0;
  aside_reserved_ = {};
  if (!storage_->events.empty()) {
    routed.parts[0] = seal_storage(storage_, reservation_);
    storage_ = new_storage(reservation_);
  } else {  // nothing of route 0: its storage stays, as a new batch's, answering nobody yet
    storage_->acknowledger.reset();
    storage_->acknowledger_base = 0;
  }
  return routed;
}

void EventBatchBuilder::set_acknowledger(std::shared_ptr<CommitTracker> acknowledger) {
  storage_->acknowledger = std::move(acknowledger);
}

EventBatch EventBatchBuilder::seal() {
  if (aside_events_ != 0)
    throw std::logic_error("EventBatchBuilder::seal() with events of other routes: seal_routed()");
  EventBatch batch = seal_storage(storage_, reservation_);
  storage_ = new_storage(reservation_);
  return batch;
}

EventBatch EventBatchBuilder::seal_storage(std::unique_ptr<EventStorage>& storage, Reservation& reservation) const {
  EventBatch batch;
  batch.begin_ = 0;
  batch.end_ = storage->events.size();
  batch.bytes_ = storage->bytes.size();  // frames and what parsing appended to them
  reservation = {batch.end_ + batch.end_ / 4, storage->bytes.size() + storage->bytes.size() / 4};
  // A batch much smaller than the reservation it was built in (one that follows a large batch)
  // gives the rest back, at the cost of copying its own few bytes: what a channel holds stays
  // within about twice its events' bytes, whatever order batch sizes come in.
  if (storage->bytes.capacity() > 2 * storage->bytes.size() + 256) storage->bytes.shrink_to_fit();
  if (storage->events.capacity() > 2 * storage->events.size() + 4) storage->events.shrink_to_fit();
  storage->header_names = header_names_;
  storage->kind = kind_;
  // A sender's own headers (a plain event's block) may have any name, beside what interceptors touch.
  storage->header_block_names = kind_ == EventKind::syslog ? block_names_ : nullptr;
  batch.storage_ = std::shared_ptr<const EventStorage>(std::move(storage));
  return batch;
}

std::unique_ptr<EventStorage> EventBatchBuilder::new_storage(const Reservation& reservation) const {
  auto storage = std::make_unique<EventStorage>();
  storage->kind = kind_;
  storage->events.reserve(reservation.events);
  storage->bytes.reserve(reservation.bytes);
  return storage;
}

}  // namespace sluice
