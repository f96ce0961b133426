#pragma once
// One way to make an event, for every source: a message in, an event in the io thread's batch
// out — decoded by the source's format (syslog's parser; Flume's event as it came), stamped with
// where it came from, through the source's interceptors, routed by its channel selector — and
// the batch put into the channels (channel_delivery.h) once it is full or the thread has read
// what there was. The stream server's io threads (TCP, TLS, RELP) and UDP's each own one.
//
// The seam: a source's format is the only part that knows what its messages mean (EventFormat);
// what follows is the same for all.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/api/event_batch.h"
#include "agent/api/interceptor.h"
#include "sources/pipeline/channel_delivery.h"
#include "sources/pipeline/message_traits.h"

namespace sluice::pipeline {

// Where a message came from: the port (and its index in the source's ports) and the client's
// address followed by its name (empty unless clientIPHeader or clientHostnameHeader asks).
struct MessageOrigin {
  uint16_t port = 0;
  size_t port_index = 0;
  std::string_view client;
  size_t client_ip_length = 0;
};

// What making a read's events found, counted by the source per port.
struct MadeTally {
  uint64_t invalid = 0;       // a format's message it could not read, kept whole (syslog: Invalid)
  uint64_t invalid_utf8 = 0;  // events whose invalid UTF-8 was replaced
  uint64_t filtered = 0;      // dropped by the source's interceptors
};

// How a source's messages become events; one per io thread, used on it alone.
class EventFormat {
 public:
  virtual ~EventFormat() = default;
  // A read begins: returns its events' arrival time (ms since the epoch), what interceptors stamp.
  virtual int64_t begin_read() = 0;
  // Appends the event made of `message` to `batch` (its last) and counts what it found.
  virtual EventRecord& decode(std::string_view message, MessageTraits traits, size_t port_index,
                              EventBatchBuilder& batch, MadeTally& tally) = 0;
};

class EventFormatFactory {
 public:
  virtual ~EventFormatFactory() = default;
  virtual std::unique_ptr<EventFormat> make() const = 0;
  // What its events are (EventStorage::kind).
  virtual EventKind kind() const { return EventKind::syslog; }
  // The most one event may take in its batch (memory_bound.h), its origin stamped.
  virtual uint64_t max_event_bytes() const = 0;
};

class EventMaker {
 public:
  // `interceptors`: the source's (null: none); `names`: its header names (portHeader, ...);
  // `expected_bytes`: what a batch's buffer is first reserved for.
  EventMaker(std::unique_ptr<EventFormat> format, EventKind kind, std::shared_ptr<const InterceptorChain> interceptors,
             std::shared_ptr<const HeaderNames> names, ChannelDelivery delivery, size_t batch_size,
             size_t expected_bytes);

  // A read begins: the arrival time of the events it makes.
  void begin_read() { now_ms_ = format_->begin_read(); }
  // The event of `message`, made in the batch: decoded, stamped with `origin`, through the
  // interceptors, routed. False: an interceptor filtered it out (counted; it is not in the batch).
  bool make(std::string_view message, MessageTraits traits, const MessageOrigin& origin, MadeTally& tally);
  // At batchSize, or past kMaxBatchBytes (a batch's offsets are 32-bit; large events fill it first).
  bool full() const { return builder_.size() >= batch_size_ || builder_.bytes() >= kMaxBatchBytes; }
  // Whether `events` more fit in the batch being made within batch_size (an empty one takes any
  // number: a call larger than batch_size goes into one batch of its own).
  bool fits(size_t events) const { return builder_.empty() || builder_.size() + events <= batch_size_; }
  static constexpr uint64_t kMaxBatchBytes = 1ULL << 30;
  bool empty() const { return builder_.empty(); }
  // The batch being made (its last event is the one make() made, until the next).
  EventBatchBuilder& batch() { return builder_; }
  const ChannelDelivery& delivery() const { return delivery_; }
  // Seals the batch into its routes' parts (empty: none made) ...
  RoutedBatch seal() { return builder_.seal_routed(delivery_.routes()); }
  // ... and puts them into the channels; true if every required channel took its part.
  bool deliver(RoutedBatch routed) { return delivery_.deliver(std::move(routed)); }
  // Both, when the batch has events; true if it was put everywhere (or had none).
  bool flush();

 private:
  const std::unique_ptr<EventFormat> format_;
  const std::shared_ptr<const InterceptorChain> interceptors_;
  const std::shared_ptr<const ChannelSelector> selector_;
  const size_t batch_size_;
  EventBatchBuilder builder_;
  ChannelDelivery delivery_;
  int64_t now_ms_ = 0;
};

}  // namespace sluice::pipeline
