#pragma once
// What a stream source's connections speak, between the bytes read and the messages they carry:
// plain syslog's LF/octet framing (sources/syslog_tcp/syslog_framing.h) or RELP (sources/relp/).
// The io worker (stream_worker.h) has one path for every protocol: it feeds a connection's
// StreamProtocol what it reads (after the PROXY header and TLS), makes each message it yields an
// event (sources/pipeline/event_maker.h), and, for a protocol that answers, sends what its AckQueue has ready,
// in order. A message's reply waits for its event: until every channel has committed it (after
// the sinks' delivery), or, with acknowledge_on_put, until every channel took it. A protocol that
// never answers has no AckQueue.

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sources/net/stream_acks.h"
#include "sources/pipeline/event_maker.h"

namespace sluice::net {

// What one read (or a stream's end) gave, for the per-port counters.
// What a read found: its frames (the protocol's count), and what making their events found
// (pipeline::MadeTally: invalid, invalid_utf8, filtered).
struct ReadTally : pipeline::MadeTally {
  uint64_t frames = 0;
  uint64_t octet_counted = 0;  // of frames
  uint64_t blank_lines = 0;
  uint64_t truncated = 0;           // longer than the most kept (eventSize), or a frame its sender did not finish
  uint64_t cut = 0;                 // partial frames we cut by closing the connection
  uint64_t refused = 0;             // calls a protocol answered with a refusal (Avro: an error), the session going on
  std::string refused_why;          // the last one's reason
  std::array<uint64_t, 2> calls{};  // calls received, by the protocol's kind (Avro: append, appendBatch)
};

// Takes the messages a protocol yields; the io worker's, for one connection's read.
class MessageSink {
 public:
  // A message to make one event of; for a protocol that answers, its reply is sent once ticket
  // `ticket` of the connection's AckQueue is done. The view is valid during the call only.
  virtual void message(std::string_view message, pipeline::MessageTraits traits, AckQueue::Ticket ticket) = 0;
  // The next `messages` messages are one call, answered as one (Avro's appendBatch): the batch
  // being made is put first if they would not fit in it, and they all go into one batch (however
  // many: the protocol bounds a call by its channels' transactionCapacity), so that a call enters
  // the channels whole (all of it, or none and "not now").
  virtual void begin_call(size_t /*messages*/) {}

 protected:
  ~MessageSink() = default;
};

class StreamProtocol {
 public:
  // How the agent ends a connection of this protocol (at a stop, at idleTimeout).
  enum class Ending : uint8_t {
    // Our FIN at a stop, then it is read until its sender closes: nothing it sent is cut. At
    // idleTimeout what it sent is finished as at its stream's end, and it closes.
    read_to_the_end,
    // It is read no more; the replies still due go out (at a stop, as long as the drain lasts),
    // then farewell() and the close: what was not answered, its sender still has and resends.
    answer_then_farewell,
  };

  virtual ~StreamProtocol() = default;
  virtual Ending ending() const = 0;
  // Bytes read from the connection. Replies that need no event (a session's open and close) go
  // into acks() in their place. Returns an empty string, or why the stream is broken: the
  // worker counts it, sends farewell() and closes the connection.
  virtual std::string feed(std::string_view data, MessageSink& sink, ReadTally& tally) = 0;
  // The stream ended: its sender closed it (cut = false) or the agent does (cut = true: the
  // drain's end, idleTimeout, a broken TLS session). What a partial frame becomes is the
  // protocol's: plain syslog keeps it (Incomplete if cut), one that answers drops it (unanswered,
  // its sender resends it).
  virtual void finish(bool cut, MessageSink& sink, ReadTally& tally) = 0;
  // Bytes received but not yet a whole frame.
  virtual size_t buffered() const = 0;
  // The connection's replies, shared with the batches whose events it waits for; null for a
  // protocol that never answers.
  virtual const std::shared_ptr<AckQueue>& acks() const = 0;
  // True once the sender closed the session: the connection ends once its last reply is out.
  virtual bool closing() const = 0;
  // What the agent sends when it ends the connection itself (RELP's serverclose).
  virtual std::string farewell() const = 0;
  // What the connection sends (replies, farewell) as the protocol puts it on the wire, in the
  // order it leaves, before TLS: Avro's deflate compresses it. Most protocols send it as it is.
  virtual void encode_outgoing(std::string& /*bytes*/) {}
};

// One per source: makes each connection's protocol.
class StreamProtocolFactory {
 public:
  virtual ~StreamProtocolFactory() = default;
  // `waker` is null unless answers().
  virtual std::unique_ptr<StreamProtocol> open(uint16_t port, std::shared_ptr<AckWaker> waker) const = 0;
  // True: every connection is answered (its protocol has an AckQueue, and the io thread a
  // waker for its replies). How such a connection ends is its protocol's ending().
  virtual bool answers() const = 0;
  // True: a message is done once put into every channel (a disk-backed one: on disk); false:
  // once every channel committed it (delivered by its sink).
  virtual bool acknowledge_on_put() const = 0;
  // For log lines and the listening line: "RELP"; empty for plain syslog.
  virtual std::string_view name() const = 0;
  // A protocol that can answer "not now" (Avro's FAILED): how long a full channel may hold a
  // batch before its calls are answered so (their senders send them again, or fail over); 0: a
  // full channel holds the connections as long as it stays full (TCP backpressure).
  virtual std::chrono::milliseconds refuse_when_full_after() const { return std::chrono::milliseconds(0); }
  // The most messages one call may carry (begin_call): a batch holds one whole, beyond batchSize.
  virtual size_t most_messages_per_call() const { return 1; }
  // The property that chose when messages are answered ("ackAfter"), for errors.
  virtual std::string_view ack_property() const = 0;
  // The most one connection's protocol may hold in memory: its partial frame (a string that
  // may have doubled) and, for one that answers, its replies unsent (memory_bound.h).
  virtual uint64_t connection_bytes() const = 0;
};

// A connection's replies that its socket has not taken yet (a client that does not read them):
// beyond this its reading pauses, so that what it makes us answer waits in its own buffers, not
// in ours; reading resumes once half of it is written.
inline constexpr size_t kUnsentRepliesMax = 256 * 1024;

}  // namespace sluice::net
