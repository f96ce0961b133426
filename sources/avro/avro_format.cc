#include "sources/avro/avro_format.h"

#include <chrono>

#include "agent/api/event_headers.h"
#include "sources/avro/avro_ipc.h"

namespace sluice::avro {
namespace {

class AvroFormat final : public pipeline::EventFormat {
 public:
  int64_t begin_read() override {
    now_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
    return now_ms_;
  }

  EventRecord& decode(std::string_view message, pipeline::MessageTraits, size_t, EventBatchBuilder& batch,
                      pipeline::MadeTally& tally) override {
    headers_.clear();
    std::string_view body;
    // The session let only whole events through: not one is counted, and made of what it holds.
    if (!read_event(
            message, [&](std::string_view name, std::string_view value) { headers_.set(name, value); }, body))
      ++tally.invalid;
    EventRecord& e = batch.append(body);
    e.timestamp_ms = now_ms_;  // when it arrived (its own "timestamp" header, if any, is a header)
    if (!headers_.empty()) batch.set_last_headers(headers_.block());
    return e;
  }

 private:
  int64_t now_ms_ = 0;
  HeaderWriter headers_;
};

}  // namespace

std::unique_ptr<pipeline::EventFormat> AvroFormatFactory::make() const { return std::make_unique<AvroFormat>(); }

uint64_t AvroFormatFactory::max_event_bytes() const {
  // The body and the headers from one frame (a header block takes at most 2 bytes more per
  // header than Avro's encoding, which takes at least 2), and the client's address and name.
  return 2 * static_cast<uint64_t>(max_frame_bytes_) + 46 + 256;
}

}  // namespace sluice::avro
