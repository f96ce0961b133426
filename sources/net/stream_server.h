#pragma once
// A stream source's server, whatever its connections speak: the component folders (syslog_tcp,
// relp) are a protocol and a table over it. numProcessors io threads serve the connections; the
// work is in rooms of its own:
//   acceptor.h          listening sockets, accept, admission (allow/deny, maxConnections, PROXY balancers)
//   stream_worker.h     one io thread: read → PROXY → TLS → protocol → events → batch → put, backpressure,
//                       replies, the drain
//   stream_protocol.h   what the connections speak (plain syslog framing, RELP) and its replies
//   (sources/pipeline/event_maker.h: how messages become events, by the source's EventFormat)
//   hostname_cache.h, reverse_resolver.h   reverse DNS for clientHostnameHeader, off the loop
//   stream_probe.h      counters, rate-limited log lines, the metrics it writes
//   tls_context.h, tls_session.h           ssl = true
//
// Threads: io thread 0 also owns the listening sockets and deals accepted connections out
// round-robin (an fd handed over through the target loop's async handle). A put that finds
// the channel full blocks that io thread: its sockets stop being read and TCP pushes back on
// the senders. Nothing is dropped while the agent runs.
//
// stop(): the acceptor takes what the listeners' backlogs hold and closes the listeners; then
// every io thread half-closes each of its connections (our FIN: "we are going") and reads on
// until the sender closes its side, or half the shutdown time left (at most 10 s) is over: a
// connection cut then is counted (connections_cut_at_shutdown). What was read is put into the
// channels; a partial frame we cut is kept as Incomplete; bytes still unread in a socket at its
// close are counted and logged (bytes_unread_at_shutdown). An answered connection (RELP) is not
// half-closed: it is answered as long as the drain lasts, then told farewell.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/api/file_watch.h"
#include "agent/api/source.h"
#include "sources/net/stream_probe.h"
#include "sources/net/stream_protocol.h"
#include "sources/net/stream_settings.h"
#include "sources/net/stream_worker.h"
#include "sources/net/tls_context.h"
#include "sources/pipeline/event_maker.h"

namespace sluice::net {

class StreamServer : public Source {
 public:
  // `component` is kept for error messages that name the file and line (a port in use).
  // `selector`: which of `channels` each event goes into (null: every one, all required).
  StreamServer(config::ComponentConfig component, StreamSettings settings, std::vector<Channel*> channels,
               std::shared_ptr<const ChannelSelector> selector, std::unique_ptr<StreamProtocolFactory> protocol,
               std::unique_ptr<pipeline::EventFormatFactory> events,
               std::shared_ptr<const InterceptorChain> interceptors);
  ~StreamServer() override;

  const std::string& name() const override { return component_.name; }
  void start() override;
  void stop(Deadline deadline) override;
  void request_stop(Deadline deadline) override;
  bool retire(Deadline ports_by) override;
  bool wait_retired(Deadline deadline) override;

  // In the order configured; after start().
  std::vector<uint16_t> listening_ports() const override { return shared_.bound_ports; }
  void use_listener_pool(std::shared_ptr<ListenerPool> pool) override { shared_.listeners = std::move(pool); }
  std::vector<std::string> listener_keys() const override;
  void reserve_listeners(const std::set<std::string>& handed_over, const std::set<uint16_t>& freed) override;
  SourceCounters counters() const override { return routes_.with(probe_.source_counters()); }
  // Everything the source counts, per port and per reason.
  StreamCounters tcp_counters() const { return probe_.counters(); }
  void write_metrics(MetricsWriter& writer) const override {
    probe_.write_metrics(writer);
    routes_.write_metrics(writer);
  }
  // SIGHUP: a TLS source reads its certificate, key and CA files again.
  void reload_credentials() override;
  uint64_t memory_bound() const override;
  uint64_t max_event_bytes() const override { return events_->max_event_bytes(); }
  uint64_t max_batch_bytes() const override { return settings_.batch_size * max_event_bytes(); }
  std::optional<std::vector<std::string>> headers_made() const override {
    // A sender's own headers (Flume's event) may be any; else what the interceptors touch.
    if (events_->kind() != EventKind::syslog) return std::nullopt;
    return sluice::headers_made(interceptors_.get(), settings_.header_names.get());
  }
  // A protocol that answers on commit (RELP, ackAfter = kafka).
  std::string_view needs_delivered_commits() const override {
    return protocol_->answers() && !protocol_->acknowledge_on_put() ? protocol_->ack_property() : std::string_view();
  }

 private:
  const config::ComponentConfig component_;
  const StreamSettings settings_;
  const int io_threads_;
  const std::unique_ptr<StreamProtocolFactory> protocol_;
  const std::unique_ptr<pipeline::EventFormatFactory> events_;
  const std::shared_ptr<const InterceptorChain> interceptors_;
  StreamProbe probe_;
  const std::shared_ptr<const ChannelSelector> selector_;
  pipeline::RouteCounters routes_;                    // what the selector leaves undone
  std::unique_ptr<TlsContext> tls_;                   // ssl = true
  std::unique_ptr<ReverseResolver> resolver_;         // clientHostnameHeader
  std::unique_ptr<pipeline::ClientBudgets> budgets_;  // maxEventsPerSecondPerClient, maxBytesPerSecondPerClient
  IoShared shared_;
  std::vector<std::unique_ptr<StreamWorker>> workers_;
  // ssl.reloadInterval: the TLS files looked at, and the thread that looks (last: stopped first).
  void reload_tls(const std::string& why);
  std::mutex credentials_mutex_;  // one reload at a time (the watch's, SIGHUP's)
  std::unique_ptr<FileWatch> tls_files_;
  std::unique_ptr<PeriodicCheck> tls_watch_;
  bool started_ = false;
  bool retiring_ = false;        // retire(): the listeners are closed, the drain has no deadline yet
  bool stop_requested_ = false;  // request_stop(): the drain has begun
};

}  // namespace sluice::net
