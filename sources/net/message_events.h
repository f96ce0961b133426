#pragma once
// How a stream source makes events of the messages its connections' protocols yield: the seam
// between the stream server (which knows connections, not what their messages mean) and a
// source's format. Every stream source today carries syslog messages (syslog_stream.h); one
// whose messages are events of their own (Flume's Avro RPC) gives its own MessageEvents.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/api/event_batch.h"
#include "sources/net/stream_protocol.h"

namespace sluice::net {

// Where a message came from: the port (and its index in the source's ports) and the client's
// address followed by its name (empty unless clientIPHeader or clientHostnameHeader asks).
struct MessageOrigin {
  uint16_t port = 0;
  size_t port_index = 0;
  std::string_view client;
  size_t client_ip_length = 0;
};

// One per io thread, used on it alone.
class MessageEvents {
 public:
  virtual ~MessageEvents() = default;
  // A read begins: its events' arrival time.
  virtual void begin_read() = 0;
  // Appends the event made of `message` to `batch`; counts what it found into `tally` (invalid,
  // filtered). False: the source's interceptors filtered it out (it is not in the batch).
  virtual bool add(std::string_view message, bool truncated, const MessageOrigin& origin, EventBatchBuilder& batch,
                   ReadTally& tally) = 0;
};

class MessageEventsFactory {
 public:
  virtual ~MessageEventsFactory() = default;
  virtual std::unique_ptr<MessageEvents> make() const = 0;
  // The most one event may take in its batch (memory_bound.h).
  virtual uint64_t max_event_bytes() const = 0;
  // The headers its events may carry beside their parsed fields, given the source's own header
  // names (Source::headers_made()); nullopt: any name.
  virtual std::optional<std::vector<std::string>> headers_made(const HeaderNames* /*names*/) const {
    return std::nullopt;
  }
};

}  // namespace sluice::net
