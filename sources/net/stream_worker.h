#pragma once
// One io thread of a stream source (stream_server.h): a libuv loop serving a share of the
// connections. Each connection is a PROXY header (proxyProtocol), then TLS (ssl = true), then its
// protocol (stream_protocol.h: plain syslog framing, RELP); every read goes that one path, and
// the messages its protocol yields become events in the thread's one EventMaker
// (sources/pipeline/event_maker.h), whose batch is put into the channels when it reaches
// batchSize or when the loop is about to wait for I/O. A put that finds a channel full blocks
// this thread: its sockets stop being read and TCP pushes back on the senders. io thread 0 also
// runs the Acceptor (acceptor.h).
//
// Stopping: stop_accepting() (io thread 0: the backlog is accepted, the listeners close), then
// request_stop(): every connection is half-closed and read on until its sender closes or the
// grace is over (drain_step); what was read is put into the channels.
//
// A protocol that answers (RELP): its replies go out as their events are done (the channels tell
// the batch's BatchAcknowledger; the AckWaker wakes this loop to send). Such a connection is not
// half-closed at a stop: it stops being read, its replies are sent as long as the drain lasts,
// then the protocol's farewell; what it sent unanswered, the sender resends.
//
// TLS: each connection has a TlsSession that the reads feed; what it decrypts goes to the
// protocol as plain bytes would. A handshake is just reads that have not completed it yet: it
// never holds the loop, and one not done by ssl.handshakeTimeout is closed (check_handshakes).
//
// The class lives in rooms, one file per concern: the loop, its start and stop, batches put and
// connections closed (stream_worker.cc); admission: PROXY header, TLS handshake slots, reverse
// lookups (stream_admission.cc); reading: bytes through TLS and the protocol into events
// (stream_reading.cc); what is sent: TLS records and replies (stream_replies.cc); the ends the
// agent chooses: idleTimeout and the drain, each as the protocol's ending() says
// (stream_drain.cc). A connection as they share it: stream_connection.h.

#include <sys/socket.h>
#include <uv.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "agent/api/channel.h"
#include "agent/api/event_batch.h"
#include "sources/net/acceptor.h"
#include "sources/net/hostname_cache.h"
#include "sources/net/reverse_resolver.h"
#include "sources/net/stream_probe.h"
#include "sources/net/stream_protocol.h"
#include "sources/net/stream_settings.h"
#include "sources/net/tls_context.h"
#include "sources/pipeline/event_maker.h"

namespace sluice::net {

// One read per io thread at a time, into a buffer of this size (and, with TLS, its decryption).
inline constexpr size_t kIoReadChunk = 256 * 1024;
// Reverse lookups waiting per io thread (clientHostnameHeader): a resolver that does not answer
// must not gather connections without end.
inline constexpr size_t kLookupsPerIoThreadMax = 64;

// What a source's io threads share; owned by the source, outlives them.
struct IoShared {
  std::string source_name;
  const StreamSettings& config;
  std::vector<Channel*> channels;
  std::shared_ptr<const ChannelSelector> selector;  // which of them each event goes into
  pipeline::RouteCounters& routes;
  StreamProbe& probe;
  const StreamProtocolFactory& protocol;                 // what every connection speaks
  const pipeline::EventFormatFactory& events;            // how its messages become events
  std::shared_ptr<const InterceptorChain> interceptors;  // the source's (null: none)
  std::atomic<int64_t> open_connections{0};              // over all io threads, for maxConnections
  std::vector<uint16_t> bound_ports;                     // as configured, 0 resolved; set before the threads run
  const TlsContext* tls = nullptr;                       // ssl = true: every connection speaks TLS
  ReverseResolver* resolver = nullptr;                   // clientHostnameHeader: the reverse lookups
  pipeline::ClientBudgets* budgets = nullptr;            // maxEventsPerSecondPerClient (null: no limit)
  int io_threads = 1;                                    // they share ssl.maxHandshakes
  std::shared_ptr<ListenerPool> listeners;               // sockets handed over at a reload (may be null)
};

// Each io thread's share of ssl.maxHandshakes (rounded up: every thread may handshake).
inline size_t handshake_slots_per_io_thread(size_t max_handshakes, int io_threads) {
  const auto threads = static_cast<size_t>(io_threads);
  return (max_handshakes + threads - 1) / threads;
}

class StreamWorker {
 public:
  StreamWorker(IoShared& shared, int index);
  ~StreamWorker();

  // io thread 0, before the threads run: listen on `ports`, dealing connections with `deal`
  // (which may hand them to other workers, or give them back to open_connection). Returns
  // the bound ports.
  std::vector<uint16_t> start_accepting(const config::ComponentConfig& component, const std::vector<uint16_t>& ports,
                                        Acceptor::Deal deal);
  void run();

  // Any thread: this loop takes over an accepted connection. False once the loop has ended
  // (the caller keeps the descriptor).
  bool hand_over(int fd, uint16_t port, const sockaddr_storage& peer);
  // On this loop's thread: serve a connection (from the acceptor or a hand-over).
  void open_connection(int fd, uint16_t port, const sockaddr_storage& peer);

  // The first step of a stop, on the acceptor: take what the listeners' backlogs hold, close
  // the listeners, then return (at the latest at `wait_until`; a loop blocked on a full channel
  // serves this too). From then on no connection is handed over.
  void stop_accepting(Deadline wait_until);
  // Begins (or bounds) the drain: every connection half-closed and read until its sender closes
  // or the grace ends; puts wait for room until `deadline`. Deadline::max() (a reload retiring
  // the source): no deadline until the agent stops; a later call sets one.
  void request_stop(Deadline deadline);
  // True once the drain has ended and its last batch is put (or counted as dropped).
  bool wait_finished(Deadline deadline);
  void join();

 private:
  struct Connection;
  class ConnectionMessages;
  // A reverse lookup in flight. `conn` is cleared once its connection went on without it (timed
  // out) or closed; the entry goes when the resolver answers.
  struct Lookup {
    Connection* conn;
    std::string ip;
    uint64_t started_ms;
  };
  struct Incoming {
    int fd;
    uint16_t port;
    sockaddr_storage peer;
  };
  // How a connection's stream ends: not yet; the sender closed it (an unterminated last line
  // is a whole event); or we cut it (a partial frame is Incomplete).
  enum class StreamEnd { none, sender_closed, cut };

  static void on_wakeup(uv_async_t* handle);
  static void on_prepare(uv_prepare_t* handle);
  static void on_alloc(uv_handle_t* handle, size_t, uv_buf_t* buf);
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void on_names(uv_async_t* handle);
  static void on_acks_ready(uv_async_t* handle);

  bool begin_tls(Connection* conn);
  void begin_reading(Connection* conn);
  void release_handshake_slot(Connection* conn);
  void publish_handshakes();  // the handshake gauges, for the metrics
  void start_reading(Connection* conn);
  bool know_client(Connection* conn);
  void receive_proxy_header(Connection* conn, std::string_view data);
  void receive_held(Connection* conn);
  void refuse_before_data(Connection* conn, Refusal why, const std::string& detail);
  bool start_lookup(Connection* conn, const sockaddr_storage& peer);
  void name_known(Connection* conn, const std::string& name);
  void check_lookups();
  void close_idle();
  void receive(Connection* conn, std::string_view data);
  void receive_tls(Connection* conn, std::string_view cipher);
  void refuse_tls(Connection* conn, TlsFailure why);
  bool send_raw(Connection* conn, std::string& bytes);  // false: the socket failed
  void resume_if_drained(Connection& conn);             // its unsent replies went out: read again
  // Reading stopped for a reason of its own comes back only once no other reason holds it.
  bool may_read(const Connection& conn) const;
  // maxEventsPerSecondPerClient: the client's budget, charged with what a read made; over it,
  // the connection is not read until the budget is back (release_held).
  void know_budget(Connection* conn);
  void charge_client(Connection& conn, uint64_t events, uint64_t bytes);
  void release_held();
  void lift_holds();
  void check_handshakes();
  // The connection's bytes (or its stream's end) through its protocol: its messages made events,
  // its replies sent.
  void consume(Connection& conn, std::string_view data, StreamEnd end = StreamEnd::none);
  void send_replies(Connection& conn);
  bool send_plain(Connection& conn, std::string bytes);  // through TLS if the connection has it
  void say_farewell(Connection* conn);                   // replies due, farewell, our FIN, then close
  void close_lingering();                                // farewells whose senders did not close
  // The ends the agent chooses, each as the connection's protocol says (StreamProtocol::Ending).
  bool end_at_stop(Connection* conn);           // false: it is read no more
  bool reads_on(const Connection& conn) const;  // read unless a drain ended its reading
  void end_now(Connection* conn);               // idleTimeout
  void retire_aged();                           // maxConnectionAge
  void drain_connection(Connection* conn, bool grace_over);
  void flush();
  void close_connection(Connection* conn);
  void close_listeners();
  void close_all_handles();
  void serve_stop_accepting();
  void shut_down();
  void bound_grace();
  void drain_step();

  IoShared& shared_;
  const StreamSettings& config_;
  IoCounters& counters_;
  uv_loop_t loop_;
  uv_async_t wakeup_;
  uv_prepare_t prepare_;
  std::unique_ptr<Acceptor> acceptor_;  // io thread 0 only
  std::unique_ptr<uv_timer_t> drain_timer_;
  std::unique_ptr<uv_timer_t> idle_timer_;
  std::unique_ptr<uv_timer_t> age_timer_;        // maxConnectionAge
  std::unique_ptr<uv_timer_t> hold_timer_;       // maxEventsPerSecondPerClient: held connections' release
  std::unique_ptr<uv_timer_t> farewell_timer_;   // a protocol that answers: farewells that linger
  std::unordered_set<Connection*> farewells_;    // ... the connections that said theirs and are read to the end
  std::unordered_set<Connection*> held_;         // ... the connections waiting for their client's budget
  std::minstd_rand age_jitter_;                  // ... each connection's share of maxConnectionAgeJitter
  std::unique_ptr<uv_timer_t> handshake_timer_;  // TLS: ssl.handshakeTimeout
  std::unique_ptr<uv_timer_t> lookup_timer_;     // clientHostnameHeader: hostnameLookupTimeout
  uint64_t last_handshake_check_ms_ = 0;
  uint64_t drain_until_ms_ = 0;         // uv_now() at which the drain's grace ends
  uint64_t drain_cap_ms_ = UINT64_MAX;  // ... at the latest (half the time to the deadline)
  bool listeners_closed_ = false;
  std::thread thread_;
  bool ran_ = false;
  bool stopping_ = false;

  std::mutex mutex_;  // guards the seven below
  std::vector<Incoming> incoming_;
  bool stop_accepting_requested_ = false;
  bool accepting_stopped_flag_ = false;  // the listeners are closed (acceptor)
  bool stop_requested_ = false;
  bool loop_ended_ = false;  // the last connection is closed: no more hand-overs
  bool finished_ = false;    // ... and the last batch put
  Deadline shutdown_deadline_ = Deadline::max();
  std::condition_variable state_changed_;  // accepting_stopped_flag_, loop_ended_, finished_

  std::unordered_set<Connection*> connections_;
  // ssl = true: handshakes in progress on this loop, at most handshake_slots_ (this thread's
  // share of ssl.maxHandshakes); the connections waiting for a slot, oldest first.
  const size_t handshake_slots_;
  size_t handshakes_ = 0;
  std::deque<Connection*> awaiting_handshake_;
  // A protocol that answers: the wake-up for replies, and the batch being built's events.
  uv_async_t acks_async_;
  std::shared_ptr<AckWaker> waker_;
  std::shared_ptr<BatchAcknowledger> batch_acks_;
  std::string full_channel_;  // the channel a batch's put gave up on (refuse_when_full_after)
  std::vector<char> read_buffer_;
  std::vector<char> plain_buffer_;                // TLS: what a session decrypts, before it is framed
  HostnameCache names_;                           // clientHostnameHeader: IP -> name
  std::unordered_map<uint64_t, Lookup> lookups_;  // in flight, by id
  uint64_t last_lookup_id_ = 0;
  uv_async_t names_async_;  // with a resolver: its answers are in
  std::shared_ptr<ReverseResolver::Inbox> inbox_;
  pipeline::EventMaker maker_;  // its events, their batch, and its put into the channels
};

}  // namespace sluice::net
