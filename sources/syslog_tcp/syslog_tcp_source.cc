#include "sources/syslog_tcp/syslog_tcp_source.h"

#include <spdlog/spdlog.h>

namespace sluice::syslog_tcp {
namespace {

// Reverse lookups at once (clientHostnameHeader): as many as libuv's pool had.
constexpr int kResolverThreads = 4;

std::unique_ptr<Source> make_syslog_tcp_source(const config::ComponentConfig& component, std::vector<Channel*> channels,
                                               BuildContext&) {
  SyslogTcpConfig c = parse_syslog_tcp_config(component);
  for (Channel* channel : channels) batch_size_for(component, "batchSize", c.batch_size, *channel);
  return std::make_unique<SyslogTcpSource>(component, std::move(c), std::move(channels));
}

}  // namespace

const ComponentSpec kSyslogTcpSourceSpec{
    .kind = config::Kind::source,
    .type = "multiport_syslogtcp",
    .aliases = {"syslogtcp", "org.apache.flume.source.MultiportSyslogTCPSource",
                "org.apache.flume.source.SyslogTcpSource"},
    .doc =
        "Syslog over TCP on one or more ports (LF/CRLF framing or RFC 6587 octet counting, RFC 3164/5424 "
        "headers); with ssl = true over TLS (RFC 5425), client certificates optional or required.",
    .describe = [] { return config::describe(kSyslogTcpProperties); },
    .make_source = &make_syslog_tcp_source,
};

SyslogTcpSource::SyslogTcpSource(config::ComponentConfig component, SyslogTcpConfig config,
                                 std::vector<Channel*> channels, std::unique_ptr<StreamProtocolFactory> protocol)
    : component_(std::move(component)),
      config_(std::move(config)),
      io_threads_(resolve_num_processors(config_.num_processors)),
      protocol_(std::move(protocol)),
      probe_(component_.name, config_, io_threads_, protocol_ ? std::string(protocol_->name()) : ""),
      tls_(config_.ssl ? std::make_unique<TlsContext>(component_, config_) : nullptr),
      resolver_(config_.client_hostname_header.empty() ? nullptr : std::make_unique<ReverseResolver>(kResolverThreads)),
      shared_{.source_name = component_.name,
              .config = config_,
              .channels = std::move(channels),
              .probe = probe_,
              .tls = tls_.get(),
              .protocol = protocol_.get(),
              .resolver = resolver_.get(),
              .io_threads = io_threads_} {}

void SyslogTcpSource::reload_credentials() {
  if (!tls_) return;
  if (const std::string error = tls_->reload(); !error.empty())
    spdlog::error("source {}: TLS files not reloaded, the ones loaded before stay in use: {}", name(), error);
  else
    spdlog::info("source {}: TLS certificate, key and CA reloaded; new connections use them", name());
}

// Per connection beside its buffers: its struct, libuv handle, strings and hash-set entry.
constexpr uint64_t kConnectionBytes = 2048;
// TLS: an established session (SSL_MODE_RELEASE_BUFFERS) with its input buffer kept at most
// 32 KiB (TlsSession::shrink_input); a handshake in progress holds OpenSSL's handshake state too.
constexpr uint64_t kTlsSessionBytes = 48 * 1024;
constexpr uint64_t kTlsHandshakeBytes = 128 * 1024;
// A reverse-DNS cache entry (clientHostnameHeader): address, name and hash node.
constexpr uint64_t kHostnameEntryBytes = 400;

uint64_t SyslogTcpSource::max_event_bytes() const {
  // The frame, a body composed without some of its header fields (keepFields other than none or
  // all: at most the frame), and the client's address and name (clientIP/HostnameHeader).
  const bool composed = config_.keep_fields != 0 && config_.keep_fields != keep_all;
  return config_.event_size * (composed ? 2 : 1) + 46 + 256;
}

uint64_t SyslogTcpSource::memory_bound() const {
  using namespace memory;
  const auto threads = static_cast<uint64_t>(io_threads_);
  // Each io thread: its read buffer (and TLS's decryption buffer), the batch it builds.
  uint64_t bound = times(threads, (tls_ ? 2 : 1) * kIoReadChunk + kReservationFactor * config_.batch_size *
                                                                      (max_event_bytes() + sizeof(EventRecord)));
  // Each connection: a partial frame (a string that may have doubled), or a protocol's partial
  // frame and its replies unsent (up to the bound, plus the replies to one read, which are at
  // most about 1.4 bytes a byte read: RELP's shortest command answered); TLS's session.
  uint64_t per_connection =
      kConnectionBytes + (protocol_ ? 2 * protocol_->max_frame_bytes() + kUnsentRepliesMax + 2 * kIoReadChunk
                                    : 2 * (config_.event_size + 1));
  if (tls_) per_connection += kTlsSessionBytes;
  if (config_.proxy_protocol != ProxyProtocol::none) per_connection += kProxyHeaderMax;
  bound = add(bound, times(static_cast<uint64_t>(config_.max_connections), per_connection));
  if (tls_)
    bound = add(bound, times(threads * handshake_slots_per_io_thread(config_.ssl_max_handshakes, io_threads_),
                             kTlsHandshakeBytes));
  if (!config_.client_hostname_header.empty()) {
    // The name cache; and what a proxied connection read while its name is looked up (one read each).
    bound = add(bound, times(threads, HostnameCache::kMaxEntries * kHostnameEntryBytes));
    if (config_.proxy_protocol != ProxyProtocol::none)
      bound = add(bound, times(threads, kLookupsPerIoThreadMax * kIoReadChunk));
  }
  return bound;
}

SyslogTcpSource::~SyslogTcpSource() {
  if (started_) stop(Clock::now());
}

void SyslogTcpSource::start() {
  for (int i = 0; i < io_threads_; ++i) workers_.push_back(std::make_unique<IoWorker>(shared_, i));
  IoWorker& acceptor = *workers_[0];
  // Round-robin over the io threads; the acceptor's own share (and a hand-over refused by a
  // loop that has ended) it serves itself.
  auto deal = [this, &acceptor, next = size_t{0}](int fd, uint16_t port, const sockaddr_storage& peer) mutable {
    IoWorker* target = workers_[next++ % workers_.size()].get();
    if (target == &acceptor || !target->hand_over(fd, port, peer)) acceptor.open_connection(fd, port, peer);
  };
  shared_.bound_ports = acceptor.start_accepting(component_, config_.ports, std::move(deal));
  probe_.set_ports(shared_.bound_ports);
  for (auto& w : workers_) w->run();
  started_ = true;
  std::string ports;
  for (uint16_t p : shared_.bound_ports) ports += (ports.empty() ? "" : " ") + std::to_string(p);
  std::string speaks = protocol_ ? std::string(protocol_->name()) : "";
  if (tls_) speaks += speaks.empty() ? "TLS" : " over TLS";
  spdlog::info("source {}: listening on {} port(s) {}{} with {} io thread(s)", name(), config_.host, ports,
               speaks.empty() ? "" : " (" + speaks + ")", io_threads_);
}

void SyslogTcpSource::request_stop(Deadline deadline) {
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

void SyslogTcpSource::stop(Deadline deadline) {
  if (!started_) return;
  request_stop(deadline);
  started_ = false;
  for (auto& w : workers_) w->join();
}

bool SyslogTcpSource::retire(Deadline ports_by) {
  if (!started_) return true;
  retiring_ = true;
  workers_[0]->stop_accepting(ports_by);
  for (auto& w : workers_) w->request_stop(Deadline::max());
  return true;
}

bool SyslogTcpSource::wait_retired(Deadline deadline) {
  for (auto& w : workers_)
    if (!w->wait_finished(deadline)) return false;
  return true;
}

}  // namespace sluice::syslog_tcp
