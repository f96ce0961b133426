#pragma once
// One connection of a stream worker (stream_worker.h), as its rooms share it: admission,
// reading, replies and the drain (stream_*.cc). Private to sources/net.

#include <sys/socket.h>
#include <uv.h>

#include <memory>
#include <string>

#include "sources/net/stream_worker.h"
#include "sources/net/tls_session.h"

namespace sluice::net {

// Our FIN: a sender that watches its socket (rsyslog checks before each send; sluice-loadgen
// does) stops writing to us and closes, and everything it wrote before is read.
inline void half_close(uv_tcp_t& handle) {
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(&handle), &fd) == 0) ::shutdown(fd, SHUT_WR);
}

struct StreamWorker::Connection {
  uv_tcp_t handle;
  StreamWorker* worker;
  uint16_t port;
  size_t port_index;  // into the source's ports, for the per-port counters
  // What it speaks: how it is framed, answered, and ended (StreamProtocol::Ending).
  const std::unique_ptr<StreamProtocol> protocol;
  // Its protocol's replies (null if it never answers), asked once: every message reads it.
  AckQueue* const ack_queue;
  uint64_t last_read_ms = 0;  // uv_now() of the last bytes
  // The client's address and host name as events carry them (clientIPHeader,
  // clientHostnameHeader): the IP's text, then the name's.
  std::string client;
  uint8_t client_ip_length = 0;
  uint64_t pending_lookup = 0;           // reverse DNS in flight (its id); reading waits for it
  std::unique_ptr<TlsSession> tls;       // ssl = true
  bool reading_paused = false;           // its replies wait unsent beyond kUnsentRepliesMax
  bool awaiting_handshake_slot = false;  // ssl = true: not read until a handshake slot is free
  bool holds_handshake_slot = false;     // its handshake counts against ssl.maxHandshakes
  uint64_t opened_ms = 0;                // uv_now() at open: the handshake's clock
  // maxConnectionAge: the uv_now() past which it is asked to reconnect, and once it has been, when.
  uint64_t retire_at_ms = UINT64_MAX;
  uint64_t asked_to_reconnect_ms = 0;
  bool asked_to_reconnect = false;
  // Its protocol's farewell is sent: its replies and the farewell go out before our FIN (a shutdown
  // request), and what its sender still sends is read and dropped until it closes or the linger ends.
  bool said_farewell = false;
  bool sender_closed = false;  // ... and its sender closed (read to the end)
  uint64_t farewell_at_ms = 0;
  uv_shutdown_t shutdown_request{};
  // maxEventsPerSecondPerClient: its client's budget (shared with the client's other connections),
  // and whether it waits for it (not read until uv_now() reaches held_until_ms).
  std::shared_ptr<pipeline::ClientBudget> budget;
  bool over_budget = false;
  uint64_t held_until_ms = 0;
  // The client: the socket's peer, or whom a PROXY header names (proxyProtocol).
  sockaddr_storage peer;
  bool awaiting_proxy = false;  // proxyProtocol: the header is not whole yet
  // Bytes read but not yet consumed: a PROXY header's start, or what followed it while the
  // client's name is looked up.
  std::string held;
  Connection(StreamWorker* w, uint16_t p, size_t index, std::unique_ptr<StreamProtocol> speaks, const StreamSettings& c,
             const sockaddr_storage& from)
      : worker(w),
        port(p),
        port_index(index),
        protocol(std::move(speaks)),
        ack_queue(protocol->acks().get()),
        peer(from),
        awaiting_proxy(c.proxy_protocol != ProxyProtocol::none) {}
  std::string peer_text() const { return address_text(peer); }
  // Its protocol answers what it sends (RELP): the replies, shared with the batches (else null).
  AckQueue* acks() const { return ack_queue; }
  bool says_farewell() const { return protocol->ending() == StreamProtocol::Ending::answer_then_farewell; }
  // Its client is known and its TLS session (if any) established: what an age may end.
  bool admitted() const {
    return !awaiting_proxy && !pending_lookup && !awaiting_handshake_slot && !(tls && tls->handshaking());
  }
};

}  // namespace sluice::net
