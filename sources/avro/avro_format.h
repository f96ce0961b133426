#pragma once
// The Avro source's EventFormat (sources/pipeline/event_maker.h): each message one AvroFlumeEvent
// as its sender wrote it, made an event that is its body and its headers as they came (a plain
// event: nothing parsed, EventKind::plain), the headers in its header block, where interceptors
// add theirs after them. The session has checked every header fits a block (avro_session.h).

#include <memory>

#include "sources/pipeline/event_maker.h"

namespace sluice::avro {

class AvroFormatFactory final : public pipeline::EventFormatFactory {
 public:
  explicit AvroFormatFactory(size_t max_frame_bytes) : max_frame_bytes_(max_frame_bytes) {}
  std::unique_ptr<pipeline::EventFormat> make() const override;
  EventKind kind() const override { return EventKind::plain; }
  uint64_t max_event_bytes() const override;

 private:
  const size_t max_frame_bytes_;
};

}  // namespace sluice::avro
