#pragma once
// One RELP session on one connection (the server's side, as rsyslog's omrelp and librelp's
// clients expect it): `open` with offers answered by ours, then `syslog` messages, each answered
// "rsp 200 OK" only once its event is done (stream_protocol.h), then the client's `close`
// answered after every earlier reply. When the agent ends a connection itself it says
// `serverclose` first: the client reconnects and resends what it has no reply for.

#include <memory>
#include <string>

#include "sources/net/stream_protocol.h"
#include "sources/relp/relp_framer.h"

namespace sluice::relp {

struct RelpSettings {
  size_t max_data_size = 0;  // maxDataSize: the largest frame taken
  size_t event_size = 0;     // the source's eventSize: a longer message is cut and flagged
};

class RelpSession final : public net::StreamProtocol {
 public:
  RelpSession(const RelpSettings& settings, std::shared_ptr<net::AckWaker> waker);

  std::string feed(std::string_view data, net::MessageSink& sink, net::ReadTally& tally) override;
  // A partial frame at the end is no message: unanswered, the sender resends it.
  void finish(bool, net::MessageSink&, net::ReadTally&) override {}
  size_t buffered() const override { return framer_.buffered(); }
  const std::shared_ptr<net::AckQueue>& acks() const override { return acks_; }
  Ending ending() const override { return Ending::answer_then_farewell; }
  bool closing() const override { return closing_; }
  std::string farewell() const override { return "0 serverclose 0\n"; }

 private:
  // Returns "" or why the session cannot go on.
  std::string command(const RelpFrame& frame, net::MessageSink& sink, net::ReadTally& tally);
  std::string open(const RelpFrame& frame);

  const RelpSettings settings_;
  RelpFramer framer_;
  std::shared_ptr<net::AckQueue> acks_;
  bool open_ = false;
  bool closing_ = false;
};

// "TXNR rsp DATALEN[ DATA]\n"
std::string relp_response(uint32_t txnr, std::string_view data);

}  // namespace sluice::relp
