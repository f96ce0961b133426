#pragma once
// syslogudp: syslog over UDP, one datagram one event, on several ports. Each of numProcessors io
// threads has its own socket on every port (SO_REUSEPORT: the kernel spreads senders over them)
// and reads them with recvmmsg, up to 64 datagrams a call, into its one EventBatchBuilder; the
// batch goes into the channels at batchSize or when the sockets are empty.
//
// UDP has no backpressure: while a put waits for room the thread reads nothing and its sockets'
// buffers (readBufferSize) fill; beyond that the kernel drops datagrams. Those drops are counted
// from the sockets' drop counts (SO_MEMINFO; sluice_source_udp_kernel_drops_total) and logged, so the loss is visible.
//
// stop(deadline): each thread reads what its sockets hold, for at most half the time left, puts
// it, counts what is still queued as unread at shutdown, and closes its sockets; a datagram that
// arrives after that is refused by the kernel (lost, as for any UDP receiver that stops).

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/api/component_spec.h"
#include "agent/api/interceptor.h"
#include "agent/api/source.h"
#include "sources/syslog/syslog_format.h"
#include "sources/syslog_udp/syslog_udp_config.h"
#include "sources/syslog_udp/syslog_udp_probe.h"

namespace sluice::syslog_udp {

class SyslogUdpSource final : public Source {
 public:
  // `interceptors`: applied to every event made (null: none); `selector`: which of `channels`
  // each event goes into (null: every one, all required).
  SyslogUdpSource(config::ComponentConfig component, SyslogUdpConfig config, std::vector<Channel*> channels,
                  std::shared_ptr<const InterceptorChain> interceptors = nullptr,
                  std::shared_ptr<const ChannelSelector> selector = nullptr);
  ~SyslogUdpSource() override;

  const std::string& name() const override { return component_.name; }
  void start() override;
  void stop(Deadline deadline) override;
  std::vector<uint16_t> listening_ports() const override { return bound_ports_; }
  // A reload's hand-over of its sockets (listener_pool.h), one per io thread and port.
  void use_listener_pool(std::shared_ptr<ListenerPool> pool) override { pool_ = std::move(pool); }
  std::vector<std::string> listener_keys() const override;
  void reserve_listeners(const std::set<std::string>& handed_over, const std::set<uint16_t>& freed) override;
  SourceCounters counters() const override { return routes_.with(probe_.source_counters()); }
  SyslogUdpCounters udp_counters() const { return probe_.counters(); }
  void write_metrics(MetricsWriter& writer) const override {
    probe_.write_metrics(writer);
    routes_.write_metrics(writer);
  }
  uint64_t memory_bound() const override;
  uint64_t max_event_bytes() const override;
  uint64_t max_batch_bytes() const override { return config_.batch_size * max_event_bytes(); }
  std::optional<std::vector<std::string>> headers_made() const override {
    return sluice::headers_made(interceptors_.get(), config_.header_names.get());
  }

  class IoThread;

 private:
  // The listener pool's key of port `port_index`'s socket of io thread `thread`.
  std::string socket_key(size_t port_index, int thread) const;

  const config::ComponentConfig component_;
  const SyslogUdpConfig config_;
  const std::vector<Channel*> channels_;
  const std::shared_ptr<const InterceptorChain> interceptors_;
  const std::shared_ptr<const ChannelSelector> selector_;  // which of the channels each event goes into
  const syslog::SyslogFormatFactory format_;               // how a datagram becomes an event
  const int io_threads_;
  SyslogUdpProbe probe_;
  std::unique_ptr<pipeline::ClientBudgets> budgets_;  // maxEventsPerSecondPerClient (null: no limit)
  pipeline::RouteCounters routes_;                    // what the selector leaves undone
  std::vector<uint16_t> bound_ports_;
  std::shared_ptr<ListenerPool> pool_;  // a reload's hand-over of sockets (null: none)
  StopDeadline stop_;                   // before threads_: they read it until they are gone
  std::vector<std::unique_ptr<IoThread>> threads_;
  bool started_ = false;
};

extern const ComponentSpec kSyslogUdpSourceSpec;

}  // namespace sluice::syslog_udp
