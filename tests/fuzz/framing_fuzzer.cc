// libFuzzer target for the source's byte path: framing (split at fuzzer-chosen offsets) and
// syslog header parsing. Checks, beyond "no crash, no leak, no UB" (ASan/UBSan):
//   - the frames do not depend on how the stream was split across reads;
//   - no frame exceeds eventSize, and every parsed offset stays inside its frame.
// Built and run by .ci/fuzz (clang, -fsanitize=fuzzer,address,undefined).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "channels/event_batch.h"
#include "sources/syslog_tcp/framer.h"
#include "sources/syslog_tcp/syslog_parser.h"

using namespace sluice;
using namespace sluice::syslog_tcp;

namespace {

struct Frame {
  std::string bytes;
  bool truncated;
  bool operator==(const Frame&) const = default;
};

std::vector<Frame> frame(std::string_view stream, size_t max_frame, const std::vector<size_t>& cuts) {
  std::vector<Frame> frames;
  LineFramer framer(max_frame);
  FramerCounters counters;
  EventBatchBuilder builder;
  auto on_frame = [&](std::string_view f, bool truncated) {
    if (f.size() > max_frame) __builtin_trap();
    EventRecord& e = builder.append(f);
    parse_syslog_header(f, e);
    if (e.body_offset > e.length) __builtin_trap();
    if (e.host_length && size_t{e.host_offset} + e.host_length > e.length) __builtin_trap();
    if (e.app_length && size_t{e.app_offset} + e.app_length > e.length) __builtin_trap();
    frames.push_back({std::string(f), truncated});
  };
  size_t from = 0;
  for (size_t cut : cuts) {
    framer.feed(stream.substr(from, cut - from), on_frame, counters);
    from = cut;
  }
  framer.feed(stream.substr(from), on_frame, counters);
  framer.finish(on_frame, counters);
  if (framer.buffered() != 0) __builtin_trap();
  return frames;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t max_frame = 16 + data[0] * 8;  // 16 .. 2056
  const size_t step = 1 + data[1] % 97;       // where the reads are cut
  const std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);
  std::vector<size_t> cuts;
  for (size_t at = step; at < stream.size(); at += step + (at % 7)) cuts.push_back(at);
  if (frame(stream, max_frame, {}) != frame(stream, max_frame, cuts)) __builtin_trap();
  return 0;
}
