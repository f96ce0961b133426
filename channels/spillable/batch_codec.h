#pragma once
// An EventBatch as bytes on disk and back: the records (fixed-size, copied as they are: the
// segment's header names the record layout so that another build refuses rather than
// misreads them), the header names of the source, then the event bytes; Snappy-compressed.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "agent/api/event_batch.h"

namespace sluice::spill {

// Identifies the record layout: a segment written with another one is not read.
uint32_t event_layout_version();

// Appends the compressed form of `batch` to `out`.
void encode_batch(const EventBatch& batch, std::string& out);

// The batch `compressed` holds, or nullopt if it is not a well-formed encoding; `tracker`
// (may be null) hears of its commits, and so does the source's acknowledger that the encoded
// batch had; it arrived when the encoded batch did (`origin`, EventBatch::origin(): not encoded,
// kept by the channel beside the record; unknown for a record replayed after a restart).
std::optional<EventBatch> decode_batch(std::string_view compressed, std::shared_ptr<CommitTracker> tracker = nullptr,
                                       BatchOrigin origin = {});

}  // namespace sluice::spill
