#pragma once
// Listening and admission, on io thread 0's loop: the listening sockets, accept(), the
// allow/deny lists and maxConnections, and dealing each admitted connection to an io thread.
// A refused connection is closed at once, counted by reason and logged (StreamProbe).

#include <sys/socket.h>
#include <uv.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/api/config_tree.h"
#include "agent/api/listener_pool.h"
#include "sources/net/stream_probe.h"
#include "sources/net/stream_settings.h"

namespace sluice::net {

// A listening socket on host:port for `config` (bound and listening, non-blocking). Throws
// ConfigError naming `component`'s ports when it cannot; with `error`, returns -1 and sets it instead.
int open_listening_socket(const config::ComponentConfig& component, const StreamSettings& config, uint16_t port,
                          int* error);

class Acceptor {
 public:
  // Takes an admitted connection: hands it to an io thread (or serves it on this one).
  using Deal = std::function<void(int fd, uint16_t port, const sockaddr_storage& peer)>;

  // `open_connections` counts over every io thread, against maxConnections: the acceptor adds
  // the admitted, whoever closes a connection subtracts it.
  // `pool` (may be null): listeners handed over at a reload (listener_pool.h).
  Acceptor(uv_loop_t* loop, const StreamSettings& config, StreamProbe& probe, IoCounters& counters,
           std::atomic<int64_t>& open_connections, Deal deal, ListenerPool* pool);

  // Listens on host:port, the `index`th of the source's ports (before the loop runs): the socket
  // the pool holds for it, else one bound now. Returns the port (0 resolved). Throws ConfigError
  // naming `component`'s ports (or host) when it cannot.
  uint16_t listen_on(const config::ComponentConfig& component, uint16_t port, size_t index);
  // At shutdown: connections the kernel completed but nobody accepted yet are accepted too
  // (their senders think them open), then close() shuts the listeners. A listener a reload hands
  // to a successor (the pool expects it) is neither: its backlog and socket go to the pool.
  void accept_backlog();
  void close();
  bool closed() const { return closed_; }

 private:
  struct Listener {
    uv_poll_t poll;
    int fd = -1;
    uint16_t port = 0;
    std::string key;  // ListenerPool's
    Acceptor* acceptor = nullptr;
  };
  bool handed_over(const Listener& listener) const;

  static void on_acceptable(uv_poll_t* handle, int status, int);
  // Accepts up to `limit` connections; false once the backlog is empty (or accept fails).
  bool accept_from(Listener& listener, int limit);
  bool admit(int fd, const sockaddr_storage& peer);
  void pause_accepting();

  uv_loop_t* const loop_;
  ListenerPool* const pool_;
  const StreamSettings& config_;
  StreamProbe& probe_;
  IoCounters& counters_;
  std::atomic<int64_t>& open_connections_;
  const Deal deal_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unique_ptr<uv_timer_t> pause_timer_;
  bool closed_ = false;
};

}  // namespace sluice::net
