#include "sources/net/stream_server.h"

#include <spdlog/spdlog.h>

#include <cerrno>

#include "agent/api/memory_bound.h"

namespace sluice::net {
namespace {

// Reverse lookups at once (clientHostnameHeader): as many as libuv's pool had.
constexpr int kResolverThreads = 4;

}  // namespace

StreamServer::StreamServer(config::ComponentConfig component, StreamSettings settings, std::vector<Channel*> channels,
                           std::shared_ptr<const ChannelSelector> selector,
                           std::unique_ptr<StreamProtocolFactory> protocol,
                           std::unique_ptr<pipeline::EventFormatFactory> events,
                           std::shared_ptr<const InterceptorChain> interceptors)
    : component_(std::move(component)),
      settings_(std::move(settings)),
      io_threads_(resolve_num_processors(settings_.num_processors)),
      protocol_(std::move(protocol)),
      events_(std::move(events)),
      interceptors_(std::move(interceptors)),
      probe_(component_.name, settings_, io_threads_, std::string(protocol_->name())),
      selector_(selector ? std::move(selector) : every_channel(channels.size())),
      routes_(component_.name, channels, *selector_),
      tls_(settings_.ssl ? std::make_unique<TlsContext>(component_, settings_) : nullptr),
      resolver_(settings_.client_hostname_header.empty() ? nullptr
                                                         : std::make_unique<ReverseResolver>(kResolverThreads)),
      budgets_(settings_.client_rate.any() ? std::make_unique<pipeline::ClientBudgets>(settings_.client_rate)
                                           : nullptr),
      shared_{.source_name = component_.name,
              .config = settings_,
              .channels = std::move(channels),
              .selector = selector_,
              .routes = routes_,
              .probe = probe_,
              .protocol = *protocol_,
              .events = *events_,
              .interceptors = interceptors_,
              .tls = tls_.get(),
              .resolver = resolver_.get(),
              .budgets = budgets_.get(),
              .io_threads = io_threads_} {
  probe_.watch_budgets(budgets_.get());
}

std::vector<std::string> StreamServer::listener_keys() const {
  std::vector<std::string> keys;
  for (size_t i = 0; i < settings_.ports.size(); ++i)
    keys.push_back(ListenerPool::key(component_.name, settings_.host, settings_.ports[i], i));
  return keys;
}

void StreamServer::reserve_listeners(const std::set<std::string>& handed_over, const std::set<uint16_t>& freed) {
  if (!shared_.listeners) return;
  for (size_t i = 0; i < settings_.ports.size(); ++i) {
    const std::string key = ListenerPool::key(component_.name, settings_.host, settings_.ports[i], i);
    if (handed_over.count(key)) continue;
    int error = 0;
    const int fd = open_listening_socket(component_, settings_, settings_.ports[i], &error);
    if (fd >= 0) {
      shared_.listeners->reserve(key, fd);
    } else if (!(error == EADDRINUSE && freed.count(settings_.ports[i]))) {
      // Again, to throw the error that names the port (or reserve it, if it was freed meanwhile).
      shared_.listeners->reserve(key, open_listening_socket(component_, settings_, settings_.ports[i], nullptr));
    }
  }
}

void StreamServer::reload_credentials() {
  if (tls_) reload_tls("SIGHUP");
}

void StreamServer::reload_tls(const std::string& why) {
  std::lock_guard lock(credentials_mutex_);
  if (tls_files_) tls_files_->changed();  // what SIGHUP read is not a change for the watch
  const std::string error = tls_->reload();
  if (!error.empty() && tls_files_) tls_files_->look_again();  // tried again at the next look
  probe_.tls_reloaded(why, error, tls_->not_after());
}

// Per connection beside its buffers: its struct, libuv handle, strings and hash-set entry.
constexpr uint64_t kConnectionBytes = 2048;
// TLS: an established session (SSL_MODE_RELEASE_BUFFERS) with its input buffer kept at most
// 32 KiB (TlsSession::shrink_input); a handshake in progress holds OpenSSL's handshake state too.
constexpr uint64_t kTlsSessionBytes = 48 * 1024;
constexpr uint64_t kTlsHandshakeBytes = 128 * 1024;
// A reverse-DNS cache entry (clientHostnameHeader): address, name and hash node.
constexpr uint64_t kHostnameEntryBytes = 400;

uint64_t StreamServer::memory_bound() const {
  using namespace memory;
  const auto threads = static_cast<uint64_t>(io_threads_);
  // Each io thread: its read buffer (and TLS's decryption buffer), the batch it builds.
  uint64_t bound =
      times(threads, (tls_ ? 2 : 1) * kIoReadChunk + reservation_factor(selector_.get()) * settings_.batch_size *
                                                         (max_event_bytes() + sizeof(EventRecord)));
  // A call (Avro's) goes into one batch, beyond batchSize: its bytes are a frame's (within the
  // events' above), its records are more.
  bound = add(bound, times(threads, reservation_factor(selector_.get()) * protocol_->most_messages_per_call() *
                                        sizeof(EventRecord)));
  // Each connection: what its protocol holds (a partial frame, replies unsent); TLS's session.
  uint64_t per_connection = kConnectionBytes + protocol_->connection_bytes();
  if (tls_) per_connection += kTlsSessionBytes;
  if (settings_.proxy_protocol != ProxyProtocol::none) per_connection += kProxyHeaderMax;
  bound = add(bound, times(static_cast<uint64_t>(settings_.max_connections), per_connection));
  if (tls_)
    bound = add(bound, times(threads * handshake_slots_per_io_thread(settings_.ssl_max_handshakes, io_threads_),
                             kTlsHandshakeBytes));
  if (!settings_.client_hostname_header.empty()) {
    // The name cache; and what a proxied connection read while its name is looked up (one read each).
    bound = add(bound, times(threads, HostnameCache::kMaxEntries * kHostnameEntryBytes));
    if (settings_.proxy_protocol != ProxyProtocol::none)
      bound = add(bound, times(threads, kLookupsPerIoThreadMax * kIoReadChunk));
  }
  return bound;
}

StreamServer::~StreamServer() {
  if (started_) stop(Clock::now());
}

void StreamServer::start() {
  for (int i = 0; i < io_threads_; ++i) workers_.push_back(std::make_unique<StreamWorker>(shared_, i));
  StreamWorker& acceptor = *workers_[0];
  // Round-robin over the io threads; the acceptor's own share (and a hand-over refused by a
  // loop that has ended) it serves itself.
  auto deal = [this, &acceptor, next = size_t{0}](int fd, uint16_t port, const sockaddr_storage& peer) mutable {
    StreamWorker* target = workers_[next++ % workers_.size()].get();
    if (target == &acceptor || !target->hand_over(fd, port, peer)) acceptor.open_connection(fd, port, peer);
  };
  shared_.bound_ports = acceptor.start_accepting(component_, settings_.ports, std::move(deal));
  probe_.set_ports(shared_.bound_ports);
  for (auto& w : workers_) w->run();
  started_ = true;
  if (tls_) {
    probe_.tls_loaded(tls_->not_after());
    if (settings_.ssl_reload_interval.count() > 0) {
      tls_files_ = std::make_unique<FileWatch>(tls_->files());
      tls_watch_ = std::make_unique<PeriodicCheck>(settings_.ssl_reload_interval, [this] {
        bool changed = false;
        {
          std::lock_guard lock(credentials_mutex_);
          changed = tls_files_->changed();
        }
        if (changed) reload_tls("its files changed");
      });
    }
  }
  std::string ports;
  for (uint16_t p : shared_.bound_ports) ports += (ports.empty() ? "" : " ") + std::to_string(p);
  std::string speaks(protocol_->name());
  if (tls_) speaks += speaks.empty() ? "TLS" : " over TLS";
  spdlog::info("source {}: listening on {} port(s) {}{} with {} io thread(s)", name(), settings_.host, ports,
               speaks.empty() ? "" : " (" + speaks + ")", io_threads_);
}

void StreamServer::request_stop(Deadline deadline) {
  if (!started_ || stop_requested_) return;
  stop_requested_ = true;
  // The acceptor first, so that every connection is in some io thread's hands before any of
  // them starts its drain (at most half the time left: the sinks need the rest).
  if (!retiring_) {
    const auto now = Clock::now();
    workers_[0]->stop_accepting(deadline > now ? now + (deadline - now) / 2 : now);
  }
  for (auto& w : workers_) w->request_stop(deadline);
}

void StreamServer::stop(Deadline deadline) {
  if (!started_) return;
  tls_watch_.reset();
  request_stop(deadline);
  started_ = false;
  for (auto& w : workers_) w->join();
}

bool StreamServer::retire(Deadline ports_by) {
  if (!started_) return true;
  retiring_ = true;
  workers_[0]->stop_accepting(ports_by);
  for (auto& w : workers_) w->request_stop(Deadline::max());
  return true;
}

bool StreamServer::wait_retired(Deadline deadline) {
  for (auto& w : workers_)
    if (!w->wait_finished(deadline)) return false;
  return true;
}

}  // namespace sluice::net
