#pragma once
// Avro IPC as Flume's Avro sink and `flume-ng avro-client` speak it to an Avro source (Avro
// 1.11's Netty transport; docs/sources.md, "Avro"):
//
//   frame    := serial:int32be  count:int32be  (length:int32be bytes){count}
//   request  := [HandshakeRequest] meta:map<bytes> message:string parameters
//   response := [HandshakeResponse] meta:map<bytes> error:boolean (Status | ["string"] error)
//
// A frame's buffers are one message, joined; its response carries the request's serial. The
// handshake rides on a connection's first call only (Netty's transport is stateful): the client
// names its protocol by MD5, and the server answers BOTH when it knows it (Flume's own), CLIENT
// when it learns it from the protocol text the client sent, or NONE (with its own text: the
// client sends the call again with its protocol's). Later calls and responses carry none.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sources/avro/avro_binary.h"

namespace sluice::avro {

// Flume's AvroSourceProtocol (flume-ng-sdk's flume.avdl) as Avro 1.11.0 prints it, and its MD5:
// what Flume 1.11's clients name in their handshake.
extern const std::string_view kFlumeProtocol;
extern const std::string_view kFlumeProtocolHash;  // 16 bytes

enum class Status : uint8_t { ok = 0, failed = 1, unknown = 2 };

// One frame: its serial and its buffers joined.
struct Frame {
  int32_t serial = 0;
  std::string message;
};

// Cuts frames out of a connection's bytes (TCP gives them in any pieces).
class FrameDecoder {
 public:
  // `max_message`: the most one frame's buffers may hold together; more is a broken stream.
  explicit FrameDecoder(size_t max_message) : max_message_(max_message) {}
  // Appends `data`; the frames now whole go into `frames`. An empty string, or why the stream
  // is broken (it cannot be read on: the connection closes).
  std::string feed(std::string_view data, std::vector<Frame>& frames);
  // Bytes held that are not a whole frame yet.
  size_t buffered() const { return pending_.size() - used_; }

 private:
  // Where the scan of the frame being received stands, so that a frame of many buffers arriving
  // in many reads is walked once, not again from its start at every read.
  struct Scan {
    int32_t count = -1;  // its buffers (-1: its header not read yet)
    int32_t read = 0;    // of them, whole so far
    size_t at = 8;       // from the frame's start, past them
    size_t total = 0;    // their bytes
  };
  std::string pending_;
  size_t used_ = 0;  // of pending_, already cut into frames
  Scan scan_;
  const size_t max_message_;
};

// A frame holding `message` in buffers of at most `buffer_max` bytes (Java's clients send 8 KiB
// ones; a server's answer is one).
std::string encode_frame(int32_t serial, std::string_view message, size_t buffer_max = SIZE_MAX);

struct HandshakeRequest {
  std::string_view client_hash;                     // 16 bytes
  std::optional<std::string_view> client_protocol;  // the text, when the client sends it
  std::string_view server_hash;                     // 16 bytes: what the client takes ours to be
};

enum class HandshakeMatch : uint8_t { both = 0, client = 1, none = 2 };

// A call's request after its handshake (if any): the message's name and its parameters' bytes.
struct CallRequest {
  std::optional<HandshakeRequest> handshake;
  std::string_view message;     // "append", "appendBatch"; "" for a handshake alone
  std::string_view parameters;  // to the end of the message
};

// Reads a request; `with_handshake` on a connection's calls until one has matched. Nullopt (and
// `why`) when it is not a well-formed request.
std::optional<CallRequest> read_call(std::string_view message, bool with_handshake, std::string& why);

// What the server answers a handshake: BOTH for Flume's protocol named by its hash; CLIENT when
// the client named another hash but sent a text that declares Flume's two messages; else NONE.
HandshakeMatch match_handshake(const HandshakeRequest& request);

// A response: the handshake's answer (when the request had a handshake), then a Status, or an
// error (a system error: a string).
std::string status_response(std::optional<HandshakeMatch> handshake, Status status);
std::string error_response(std::optional<HandshakeMatch> handshake, std::string_view error);
// The handshake's answer alone (NONE, or a handshake without a call).
std::string handshake_response(HandshakeMatch match);

// The most headers an event may carry: what a sender that sends more is not Flume (an event's
// header block holds far fewer bytes anyway).
inline constexpr int64_t kMaxHeadersPerEvent = 1024;

// The headers and body of one AvroFlumeEvent (record {map<string> headers; bytes body}).
struct FlumeEventView {
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  std::string_view body;
};

// What a call's events may hold: more is refused (split_events).
struct EventBounds {
  size_t max_events = SIZE_MAX;                        // in one call
  std::string_view max_events_why = "maxBatchEvents";  // what sets it, for the refusal
  size_t max_name = SIZE_MAX;                          // bytes of a header's name
  size_t max_value = SIZE_MAX;                         // bytes of a header's value
};

// An appendBatch's events (array<AvroFlumeEvent>), or append's one, each as the bytes it
// occupies in `parameters` (in order). False (and `why`) when they are not well formed, more than
// `bounds` allow, or the parameters hold more than them.
bool split_events(std::string_view parameters, bool batch, const EventBounds& bounds,
                  std::vector<std::string_view>& events, std::string& why);

// At most 64 bytes of what a sender named, its control bytes as '?': for an answer and a log line.
std::string printable(std::string_view text);

// One event's bytes (split_events) read into `event` (its vector reused); false when they are not
// an AvroFlumeEvent.
bool read_event(std::string_view bytes, FlumeEventView& event);

// One event read from `in` (where it stands), each header handed to `header(name, value, in)` as
// it is read (which may fail `in`); returns its body (`in` fails if it is not an AvroFlumeEvent).
template <class Header>
std::string_view read_event_from(BinaryReader& in, Header&& header) {
  int64_t headers = 0;
  for (int64_t count; (count = in.read_block_count(kMaxHeadersPerEvent - headers)) > 0;) {
    headers += count;
    for (int64_t i = 0; i < count && in.ok(); ++i) {
      const std::string_view name = in.read_bytes();
      const std::string_view value = in.read_bytes();
      if (in.ok()) header(name, value, in);
    }
  }
  return in.read_bytes();
}

// One event's bytes read, each header handed to `header(name, value)` as it is read (no list
// made), the body returned in `body`; false when they are not one AvroFlumeEvent.
template <class Header>
bool read_event(std::string_view bytes, Header&& header, std::string_view& body) {
  BinaryReader in(bytes);
  body =
      read_event_from(in, [&](std::string_view name, std::string_view value, BinaryReader&) { header(name, value); });
  return in.ok() && in.at_end();
}

// A client's side: an appendBatch request of `events` (each an encoded AvroFlumeEvent), with
// the handshake when `handshake` (and the protocol's text when `with_protocol`).
std::string append_batch_request(const std::vector<std::string>& events, bool handshake, bool with_protocol);
// The same of `count` events encoded one after the other in `events`.
std::string append_batch_request(std::string_view events, size_t count, bool handshake, bool with_protocol);
// An AvroFlumeEvent's encoding (appended to `out`).
std::string encode_event(const std::vector<std::pair<std::string, std::string>>& headers, std::string_view body);
void append_event(const std::vector<std::pair<std::string, std::string>>& headers, std::string_view body,
                  std::string& out);

// A response read by a client: the handshake's answer when it sent one, then the status or error.
struct CallResponse {
  std::optional<HandshakeMatch> handshake;
  std::optional<Status> status;  // nullopt: an error (or NONE: no call was made)
  std::string error;
};
std::optional<CallResponse> read_response(std::string_view message, bool with_handshake, std::string& why);

}  // namespace sluice::avro
