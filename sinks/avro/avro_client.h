#pragma once
// The Avro sink's connection to a collector's Avro source (Flume's or Sluice's): Flume's Avro RPC
// (sources/avro/avro_ipc.h) on one TCP connection, optionally in TLS or in deflate, made when
// the first call needs it and reused for the calls after it, each call's serial one more than the
// last. The handshake rides on the connection's first call, as Java's client sends it (the
// protocol's hash, its text only if the server asks).
//
// One thread uses it (the sink's): blocking calls, each bounded by its deadline.

#include <openssl/ssl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "agent/api/deadline.h"
#include "sources/avro/avro_deflate.h"
#include "sources/avro/avro_ipc.h"

namespace sluice::avro {

struct AvroClientSettings {
  std::string host;
  uint16_t port = 0;
  std::chrono::milliseconds connect_timeout{20000};  // the TCP connect and the TLS handshake
  std::chrono::milliseconds request_timeout{20000};  // a call's answer
  std::optional<int> deflate_level;                  // compression-type = deflate
  std::shared_ptr<SSL_CTX> tls;                      // null: plain TCP
  // The sink's stop (or retirement): every wait ends by it too, re-read as it waits.
  const StopDeadline* stop = nullptr;
};

// What became of a call.
enum class CallOutcome : uint8_t {
  ok,           // answered OK: the collector holds the events
  refused,      // answered FAILED, UNKNOWN or with an error: it holds none of them
  unreachable,  // no connection (connect, TLS or the handshake failed): nothing of the call was sent
  no_answer,    // sent, and no answer in time or the connection broke: it may hold them
};
std::string_view outcome_label(CallOutcome outcome);  // for metrics: ok, refused, unreachable, no_answer

// OpenSSL's reason for its last failure (its error queue emptied), for messages.
std::string openssl_reason();

struct CallResult {
  CallOutcome outcome = CallOutcome::ok;
  std::string why;  // for the log, when not ok
};

struct NameLookup;  // avro_client.cc: a name being resolved on a thread of its own

class AvroClient {
 public:
  explicit AvroClient(AvroClientSettings settings);
  ~AvroClient();
  AvroClient(const AvroClient&) = delete;
  AvroClient& operator=(const AvroClient&) = delete;

  // appendBatch of `count` events encoded one after the other in `events` (append_event),
  // connecting first if need be; it waits for the answer until request-timeout, or `deadline` if
  // that comes first. Any outcome but ok closes the connection (the next call makes a new one).
  CallResult append_batch(std::string_view events, size_t count, Deadline deadline);
  // Closes the connection (the next call connects again).
  void close();
  bool connected() const { return fd_ >= 0; }
  // When the connection in use was made (Clock::time_point{} if none).
  Clock::time_point connected_at() const { return connected_at_; }
  uint64_t connections_made() const { return connections_made_; }

 private:
  std::string connect(Deadline deadline);  // "" or why not
  bool closed_by_peer() const;
  std::string tls_handshake(Deadline deadline);
  // One request out and its answer in; nullopt and `why` when the connection failed under it.
  std::optional<CallResponse> exchange(const std::string& request, Deadline deadline, bool& sent, std::string& why);
  bool write_all(std::string_view bytes, Deadline deadline, std::string& why);
  // Reads until a whole frame is in; nullopt and `why` on a timeout, a close or a broken stream.
  std::optional<Frame> read_frame(Deadline deadline, std::string& why);
  // Bytes from the connection (through TLS, inflated): > 0, 0 at its end, -1 and `why` on an error
  // or the deadline.
  ssize_t read_some(char* into, size_t size, Deadline deadline, std::string& why);
  // Waits until the socket is ready for `events` or the deadline; false (and why) at the deadline.
  bool wait(short events, Deadline deadline, std::string& why) const;

  const AvroClientSettings settings_;
  std::shared_ptr<NameLookup> pending_lookup_;  // a name lookup given up on, still running
  int fd_ = -1;
  SSL* ssl_ = nullptr;
  std::unique_ptr<DeflateStream> deflater_;
  std::unique_ptr<InflateStream> inflater_;
  std::string inflated_;                   // inflated bytes not yet framed
  std::unique_ptr<FrameDecoder> decoder_;  // a connection's own
  bool handshaken_ = false;
  uint32_t serial_ = 0;
  Clock::time_point connected_at_{};
  uint64_t connections_made_ = 0;
};

}  // namespace sluice::avro
