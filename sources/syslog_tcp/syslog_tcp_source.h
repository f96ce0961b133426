#pragma once
// multiport_syslogtcp: syslog over TCP on several ports, served by numProcessors io threads.
// The source is its lifecycle; the work is in rooms of its own:
//   listener.h          listening sockets, accept, admission (allow/deny, maxConnections)
//   io_worker.h         one io thread: read → frame → batch → put, backpressure, the drain
//   hostname_cache.h    reverse DNS answers for clientHostnameHeader
//   syslog_tcp_probe.h  counters, rate-limited log lines, the metrics it writes
//   tls_context.h       ssl = true: the server's certificate, client verification, allowed peers
//   tls_session.h       one TLS connection over memory buffers, driven by its io thread
//   framer.h, event_decoder.h, syslog_parser.h, charset.h: from bytes to events
//
// Threads: io thread 0 also owns the listening sockets and deals accepted connections out
// round-robin (an fd handed over through the target loop's async handle). A put that finds
// the channel full blocks that io thread: its sockets stop being read and TCP pushes back on
// the senders. Nothing is dropped while the agent runs.
//
// stop(): the acceptor takes what the listeners' backlogs hold and closes the listeners; then
// every io thread half-closes each of its connections (our FIN: "we are going") and reads on
// until the sender closes its side, or half the shutdown time left (at most 10 s) is over: a
// connection cut then is counted (connections_cut_at_shutdown). What was read is put into the channels;
// a partial frame we cut is kept as Incomplete; bytes still unread in a socket at its close
// are counted and logged (bytes_unread_at_shutdown).

#include <memory>
#include <string>
#include <vector>

#include "agent/api/component_spec.h"
#include "agent/api/source.h"
#include "sources/net/tls_context.h"
#include "sources/syslog_tcp/io_worker.h"
#include "sources/syslog_tcp/syslog_tcp_config.h"
#include "sources/syslog_tcp/syslog_tcp_probe.h"

namespace sluice::syslog_tcp {

class SyslogTcpSource final : public Source {
 public:
  // `component` is kept for error messages that name the file and line (a port in use).
  // `protocol`: the connections speak it (RELP) rather than plain syslog frames.
  SyslogTcpSource(config::ComponentConfig component, SyslogTcpConfig config, std::vector<Channel*> channels,
                  std::unique_ptr<StreamProtocolFactory> protocol = nullptr);
  ~SyslogTcpSource() override;

  const std::string& name() const override { return component_.name; }
  void start() override;
  void stop(Deadline deadline) override;
  void request_stop(Deadline deadline) override;
  bool retire(Deadline ports_by) override;
  bool wait_retired(Deadline deadline) override;

  // In the order configured; after start().
  std::vector<uint16_t> listening_ports() const override { return shared_.bound_ports; }
  SourceCounters counters() const override { return probe_.source_counters(); }
  // Everything the source counts, per port and per reason.
  SyslogTcpCounters tcp_counters() const { return probe_.counters(); }
  void write_metrics(MetricsWriter& writer) const override { probe_.write_metrics(writer); }
  // SIGHUP: a TLS source reads its certificate, key and CA files again.
  void reload_credentials() override;
  // A protocol that answers on commit (RELP, ackAfter = kafka).
  uint64_t memory_bound() const override;
  uint64_t max_event_bytes() const override;
  uint64_t max_batch_bytes() const override { return config_.batch_size * max_event_bytes(); }
  std::string_view needs_delivered_commits() const override {
    return protocol_ && !protocol_->acknowledge_on_put() ? protocol_->ack_property() : std::string_view();
  }

 private:
  const config::ComponentConfig component_;
  const SyslogTcpConfig config_;
  const int io_threads_;
  const std::unique_ptr<StreamProtocolFactory> protocol_;
  SyslogTcpProbe probe_;
  std::unique_ptr<TlsContext> tls_;            // ssl = true
  std::unique_ptr<ReverseResolver> resolver_;  // clientHostnameHeader
  IoShared shared_;
  std::vector<std::unique_ptr<IoWorker>> workers_;
  bool started_ = false;
  bool retiring_ = false;        // retire(): the listeners are closed, the drain has no deadline yet
  bool stop_requested_ = false;  // request_stop(): the drain has begun
};

extern const ComponentSpec kSyslogTcpSourceSpec;

}  // namespace sluice::syslog_tcp
