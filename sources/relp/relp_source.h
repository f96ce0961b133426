#pragma once
// type = relp: RELP (rsyslog's reliable event logging protocol) in, each message answered only
// once its event is done downstream (ackAfter). The connections, their io threads, admission,
// TLS, parsing and headers are the syslog TCP source's (sources/syslog_tcp/), which runs each
// connection's RelpSession (relp_session.h) in place of its framer.

#include "agent/api/component_spec.h"
#include "sources/net/stream_protocol.h"
#include "sources/relp/relp_config.h"

namespace sluice::relp {

class RelpProtocolFactory final : public net::StreamProtocolFactory {
 public:
  RelpProtocolFactory(RelpSettings settings, AckAfter ack_after) : settings_(settings), ack_after_(ack_after) {}
  std::unique_ptr<net::StreamProtocol> open(std::shared_ptr<net::AckWaker> waker) const override {
    return std::make_unique<RelpSession>(settings_, std::move(waker));
  }
  bool acknowledge_on_put() const override { return ack_after_ == AckAfter::channel; }
  std::string_view name() const override { return "RELP"; }
  std::string_view ack_property() const override { return "ackAfter"; }
  size_t max_frame_bytes() const override { return settings_.max_data_size + 64; }  // its header too

 private:
  const RelpSettings settings_;
  const AckAfter ack_after_;
};

extern const ComponentSpec kRelpSourceSpec;

}  // namespace sluice::relp
