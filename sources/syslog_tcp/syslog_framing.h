#pragma once
// Plain syslog over a stream (RFC 6587): the stream server's protocol (net/stream_protocol.h)
// made of the LF/octet framer (framer.h). It never answers; a partial frame at the stream's end
// is an event (Incomplete if the agent cut it).

#include <memory>

#include "sources/net/stream_protocol.h"
#include "sources/syslog_tcp/framer.h"

namespace sluice::syslog_tcp {

class SyslogFraming final : public net::StreamProtocol {
 public:
  SyslogFraming(size_t max_frame, bool detect_octet_counting) : framer_(max_frame, detect_octet_counting) {}

  std::string feed(std::string_view data, net::MessageSink& sink, net::ReadTally& tally) override {
    framer_.feed(
        data, [&](std::string_view frame, pipeline::MessageTraits traits) { sink.message(frame, traits, 0); }, tally);
    return {};
  }
  void finish(bool cut, net::MessageSink& sink, net::ReadTally& tally) override {
    framer_.finish([&](std::string_view frame, pipeline::MessageTraits traits) { sink.message(frame, traits, 0); },
                   tally, cut);
  }
  size_t buffered() const override { return framer_.buffered(); }
  Ending ending() const override { return Ending::read_to_the_end; }
  const std::shared_ptr<net::AckQueue>& acks() const override { return kNoAcks; }
  bool closing() const override { return false; }
  std::string farewell() const override { return {}; }

 private:
  static inline const std::shared_ptr<net::AckQueue> kNoAcks;
  Framer framer_;
};

class SyslogFramingFactory final : public net::StreamProtocolFactory {
 public:
  SyslogFramingFactory(size_t max_frame, bool detect_octet_counting)
      : max_frame_(max_frame), detect_octets_(detect_octet_counting) {}
  std::unique_ptr<net::StreamProtocol> open(uint16_t, std::shared_ptr<net::AckWaker>) const override {
    return std::make_unique<SyslogFraming>(max_frame_, detect_octets_);
  }
  bool answers() const override { return false; }
  bool acknowledge_on_put() const override { return false; }
  std::string_view name() const override { return {}; }
  std::string_view ack_property() const override { return {}; }
  // The partial frame: a string of at most max_frame + 1 bytes that may have doubled.
  uint64_t connection_bytes() const override { return 2 * (max_frame_ + 1); }

 private:
  const size_t max_frame_;
  const bool detect_octets_;
};

}  // namespace sluice::syslog_tcp
