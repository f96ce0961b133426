#pragma once
// The sending side of sluice-loadgen: `threads` sender threads share `connections` TCP
// connections spread round-robin over the targets. Each thread paces itself with a token
// bucket over chunks of events (never a sleep per event) and writes whole chunks. A connection
// that fails is reconnected with backoff; the events of the write that failed are recorded as
// "possibly lost" (they may or may not have reached the receiver), apart from the sent ones.
// A receiver that half-closes a connection (Sluice does at shutdown) is taken at its word:
// once it has acknowledged what was written (SIOCOUTQ empty; at most 11 s) the connection is
// closed and opened again. Events it never acknowledged — it reset the connection, or the wait
// ran out — are declared possibly lost with their sequence numbers, as are those of a failed
// write: what is missing beyond them was lost after it reached the receiver's kernel.
//
// With `udp`, each "connection" is a connected UDP socket of its own (its own id and sequence)
// and each event one datagram, sent a chunk at a time with sendmmsg (and UDP segmentation
// offload, which the receiver does not see). UDP has no acknowledgement:
// `sent` is what the kernel took from us; a datagram in a send that failed counts as possibly
// lost. What the loopback's backlog dropped while we sent (/proc/net/softnet_stat: drops before
// any socket saw them, counted by no receiver) is recorded for the verifier.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loadgen/event_template.h"
#include "loadgen/tls_client.h"

namespace sluice::loadgen {

struct Target {
  std::string host;
  uint16_t port;
  std::string from;  // the local address to send from (an IP literal); empty: the kernel's choice
};
// "host:port" → Target; throws std::invalid_argument.
Target parse_target(const std::string& text);

struct SendOptions {
  std::vector<Target> targets;
  int connections = 4;
  uint32_t first_connection = 0;      // the first connection's id, the others' follow (RELP: one more)
  int threads = 0;                    // 0: min(connections, 2)
  double rate = 0;                    // events/s over all connections; 0 = as fast as possible
  std::chrono::milliseconds ramp{0};  // rise linearly from 0 to rate over this long
  EventFormat format;
  bool udp = false;       // datagrams instead of TCP connections (format.framing is then datagram)
  bool udp_gso = true;    // UDP: datagrams of one size sent 64 per send with UDP_SEGMENT (see sender.cc)
  bool tls = false;       // TCP over TLS (tls_client.h)
  bool relp = false;      // RELP sessions (relp_sender.h): each event acknowledged by the receiver
  int relp_window = 128;  // RELP: events sent and not yet acknowledged, at most, per connection
  bool avro = false;      // Flume's Avro RPC (avro_sender.h): appendBatch calls, each acknowledged
  int avro_batch = 100;   // Avro: events per call (Flume's sink's batch-size)
  int avro_window = 1;    // Avro: calls sent and not yet answered, at most, per connection
  TlsClientOptions tls_client;
  std::vector<std::string> from;  // local addresses, one per connection in turn (--from); empty: the kernel's
  std::chrono::milliseconds duration{10000};
  // After `duration`, how long a write may still wait on a receiver that takes nothing; then its
  // events count as possibly lost and the connection closes, so that every run ends.
  std::chrono::milliseconds write_timeout{60000};
  uint64_t count = 0;                                 // total events; 0 = until duration
  std::chrono::milliseconds progress_interval{1000};  // 0: no live progress on stderr
  std::string csv_path;                               // one row per second, if set
};

struct ConnectionResult {
  uint32_t id = 0;
  std::string target;
  uint64_t sent = 0;           // sequence numbers issued: written, or in a write that failed
  uint64_t possibly_lost = 0;  // events in writes that failed, or never acknowledged by a receiver that went
  std::vector<std::pair<uint64_t, uint64_t>> lost_ranges;  // their sequence numbers, [first, last]
  uint64_t reconnects = 0;
  uint64_t connects_failed = 0;     // connection attempts that failed (refused: nothing listened), retried
  uint64_t closed_by_receiver = 0;  // times the receiver half-closed (shutting down) and we closed and came back
  std::string error;                // the last error; empty if the connection never failed
};

struct SendResult {
  std::vector<ConnectionResult> connections;
  uint64_t sent = 0;
  uint64_t possibly_lost = 0;
  uint64_t reconnects = 0;
  uint64_t connects_failed = 0;
  double seconds = 0;
  double cpu_seconds = 0;      // the sender's own user + system time
  double blocked_seconds = 0;  // time spent inside send(): the receiver not keeping up
  bool udp = false;
  bool udp_gso = false;        // UDP: some datagrams went 64 to a packet (one backlog drop may be 64 of them)
  uint64_t backlog_drops = 0;  // UDP: packets the machine's input backlog dropped during the run (machine-wide)
  bool relp = false;
  bool avro = false;
  int relp_window = 0;                    // RELP: events; Avro: calls
  uint64_t acknowledged = 0;              // RELP: events the receiver answered 200 OK; Avro: in calls answered OK
  double ack_p50_ms = 0, ack_p99_ms = 0;  // RELP: from an event's write to its reply; Avro: a call's
  double rate() const { return seconds > 0 ? (sent - possibly_lost) / seconds : 0; }
  // No connection failed for good (reconnected ones count as fine).
  bool ok() const { return failed_for_good == 0; }
  int failed_for_good = 0;
  std::string to_json() const;
};

// Packets every CPU's input backlog has dropped so far (the second column of /proc/net/softnet_stat):
// on loopback, where a datagram waits before any socket's buffer; machine-wide.
uint64_t input_backlog_drops();

// Runs to completion (count reached or duration over). Throws if a target cannot be reached
// at the start.
SendResult send_events(const SendOptions& options);

// A TCP connection, or a UDP socket connected to the target; -1 with `error` set if none.
int connect_to(const Target& target, bool udp, std::string& error);

// A blocking TCP socket's writes made to wake once a second while the receiver takes nothing
// (SO_SNDTIMEO), so that the writer can give up at a deadline of its own (write_all below, and
// write_all over TLS): a receiver that stops reading must not hold a run for ever.
void wake_blocked_writes(int fd);

// Writes all of `data` to a socket made by wake_blocked_writes; false, with why in `error`, if the
// socket failed or `give_up_at` came before the last byte was taken.
bool write_all(int fd, std::string_view data, std::chrono::steady_clock::time_point give_up_at, std::string& error);
// This process's user + system CPU time so far.
double process_cpu_seconds();

}  // namespace sluice::loadgen
