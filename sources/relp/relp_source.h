#pragma once
// type = relp: RELP (rsyslog's reliable event logging protocol) in, each message answered only
// once its event is done downstream (ackAfter). The connections, their io threads, admission,
// TLS and the drain are the stream server's (sources/net/stream_server.h), parsing and headers a
// syslog stream's (syslog/syslog_stream.h); each connection speaks a RelpSession (relp_session.h).

#include "agent/api/component_spec.h"
#include "sources/net/stream_protocol.h"
#include "sources/net/stream_worker.h"
#include "sources/relp/relp_config.h"

namespace sluice::relp {

class RelpProtocolFactory final : public net::StreamProtocolFactory {
 public:
  RelpProtocolFactory(RelpSettings settings, AckAfter ack_after) : settings_(settings), ack_after_(ack_after) {}
  std::unique_ptr<net::StreamProtocol> open(uint16_t, std::shared_ptr<net::AckWaker> waker) const override {
    return std::make_unique<RelpSession>(settings_, std::move(waker));
  }
  bool answers() const override { return true; }
  bool acknowledge_on_put() const override { return ack_after_ == AckAfter::channel; }
  std::string_view name() const override { return "RELP"; }
  std::string_view ack_property() const override { return "ackAfter"; }
  // A partial frame (with its header; a string that may have doubled) and its replies unsent (up
  // to the bound, plus the replies to one read, which are at most about 1.4 bytes a byte read:
  // RELP's shortest command answered).
  uint64_t connection_bytes() const override {
    return 2 * (settings_.max_data_size + 64) + net::kUnsentRepliesMax + 2 * net::kIoReadChunk;
  }

 private:
  const RelpSettings settings_;
  const AckAfter ack_after_;
};

extern const ComponentSpec kRelpSourceSpec;

}  // namespace sluice::relp
