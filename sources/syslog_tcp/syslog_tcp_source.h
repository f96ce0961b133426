#pragma once
// multiport_syslogtcp: syslog over TCP on several ports, served by numProcessors io threads.
//
// Threads: io thread 0 also owns the listening sockets and deals accepted connections out
// round-robin (an fd handed over through the target loop's async handle). Each io thread runs
// a libuv loop, frames and parses what its connections send into one EventBatchBuilder, and
// puts the batch into the channels when it reaches batchSize or when the loop is about to wait
// for I/O. A put that finds the channel full blocks that io thread: its sockets stop being
// read and TCP pushes back on the senders. Nothing is dropped while the agent runs.
//
// stop(): the acceptor takes what the listeners' backlogs hold and closes the listeners; then
// every io thread half-closes each of its connections (our FIN: "we are going") and reads on
// until the sender closes its side, or has been quiet for 200 ms with nothing buffered, or
// half the shutdown time left (at most 10 s) is over. What was read is put into the channels;
// a partial frame we cut is kept as Incomplete; bytes still unread in a socket at its close
// are counted and logged (bytes_unread_at_shutdown).

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "agent/component_spec.h"
#include "sources/syslog_tcp/syslog_tcp_config.h"

namespace sluice::syslog_tcp {

class SyslogTcpSource final : public Source {
 public:
    // `component` is kept for error messages that name the file and line (a port in use).
  SyslogTcpSource(config::ComponentConfig component, SyslogTcpConfig config,
                  std::vector<Channel*> channels);
  ~SyslogTcpSource() override;

  const std::string& name() const override { return name_; }
  void start() override;
  void stop(Deadline deadline) override;

  // In the order configured; after start().
  std::vector<uint16_t> listening_ports() const override { return bound_ports_; }
  SourceCounters counters() const override;

  class Worker;  // one io thread; defined in the .cc

 private:
  const std::string name_;
  const config::ComponentConfig component_;
  const SyslogTcpConfig config_;
  const std::vector<Channel*> channels_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<uint16_t> bound_ports_;
  std::atomic<int64_t> open_connections_{0};  // over all io threads, for maxConnections
  bool started_ = false;
};

extern const ComponentSpec kSyslogTcpSourceSpec;

}  // namespace sluice::syslog_tcp
