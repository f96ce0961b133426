#pragma once
// A protocol that carries syslog messages over the TCP source's connections in frames of its
// own and answers the sender (RELP: sources/relp/). The io worker (io_worker.h) reads, feeds the
// connection's StreamProtocol, decodes each message it yields into the batch exactly as a plain
// syslog frame, and sends what the protocol's AckQueue has ready, in order. A message's reply
// waits for its event: until every channel has committed it (after the sinks' delivery), or,
// with acknowledge_on_put, until every channel took it.

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sources/net/stream_acks.h"

namespace sluice::net {

class StreamProtocol {
 public:
  // A message to decode as one syslog event; its reply is sent once ticket `ticket` of the
  // connection's AckQueue is done.
  using MessageFn = std::function<void(std::string_view message, bool truncated, AckQueue::Ticket ticket)>;

  virtual ~StreamProtocol() = default;
  // Bytes read from the connection. Replies that need no event (a session's open and close) go
  // into acks() in their place. Returns an empty string, or why the stream is broken: the
  // worker counts it, sends farewell() and closes the connection.
  virtual std::string feed(std::string_view data, const MessageFn& on_message) = 0;
  // Bytes received but not yet a whole frame.
  virtual size_t buffered() const = 0;
  // The connection's replies; shared with the batches whose events it waits for.
  virtual const std::shared_ptr<AckQueue>& acks() const = 0;
  // True once the sender closed the session (its replies then end the connection).
  virtual bool closing() const = 0;
  // What the agent sends when it ends the connection itself (RELP's serverclose).
  virtual std::string farewell() const = 0;
};

// One per source: makes each connection's protocol.
class StreamProtocolFactory {
 public:
  virtual ~StreamProtocolFactory() = default;
  virtual std::unique_ptr<StreamProtocol> open(std::shared_ptr<AckWaker> waker) const = 0;
  // True: a message is done once put into every channel (a disk-backed one: on disk); false:
  // once every channel committed it (delivered by its sink).
  virtual bool acknowledge_on_put() const = 0;
  // For log lines and the listening line: "RELP".
  virtual std::string_view name() const = 0;
  // The property that chose when messages are answered ("ackAfter"), for errors.
  virtual std::string_view ack_property() const = 0;
  // The most a connection's partial frame may hold (memory_bound.h).
  virtual size_t max_frame_bytes() const = 0;
};

// A connection's replies that its socket has not taken yet (a client that does not read them):
// beyond this its reading pauses, so that what it makes us answer waits in its own buffers, not
// in ours; reading resumes once half of it is written.
inline constexpr size_t kUnsentRepliesMax = 256 * 1024;

}  // namespace sluice::net
