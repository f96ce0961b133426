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

#include "agent/api/event_batch.h"
#include "agent/api/event_json.h"
#include "sources/syslog/charset.h"
#include "sources/syslog/syslog_parser.h"
#include "sources/syslog_tcp/framer.h"

using namespace sluice;
using namespace sluice::syslog_tcp;

namespace {

struct Frame {
  std::string bytes;
  bool truncated;
  bool operator==(const Frame&) const = default;
};

std::vector<Frame> frame(std::string_view stream, size_t max_frame, bool octets, const std::vector<size_t>& cuts) {
  std::vector<Frame> frames;
  Framer framer(max_frame, octets);
  FramerCounters counters;
  EventBatchBuilder builder;
  auto on_frame = [&](std::string_view f, sluice::pipeline::MessageTraits traits) {
    if (f.size() > max_frame) __builtin_trap();
    // A frame said to be ASCII is (the decoder skips its UTF-8 check for it).
    if (traits.ascii)
      for (char c : f)
        if (static_cast<unsigned char>(c) >= 0x80) __builtin_trap();
    EventRecord& e = builder.append(f);
    HeaderLayout layout;
    parse_syslog(f, ParseClock::at(1'764'504'000'000), e, &layout);
    if (size_t{e.body_offset} + e.body_length != e.length || e.message_offset > e.length) __builtin_trap();
    for (Span s :
         {e.host, e.app, e.procid, e.msgid, e.structured_data, layout.version, layout.timestamp, layout.hostname})
      if (s.length && size_t{s.offset} + s.length > e.length) __builtin_trap();
    if (layout.pri_end > e.length) __builtin_trap();
    // The json writer and the charset conversion see every frame too, and give UTF-8.
    std::string json;
    const EventBatch batch = builder.seal();
    append_event_json(batch, batch[0], json);
    if (!is_valid_utf8(json)) __builtin_trap();
    std::string utf8;
    convert_to_utf8(Charset::utf8, f, utf8);
    if (!is_valid_utf8(utf8)) __builtin_trap();
    convert_to_utf8(Charset::latin1, f, utf8);
    if (!is_valid_utf8(utf8)) __builtin_trap();
    frames.push_back({std::string(f), traits.truncated});
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
  const bool octets = (data[1] & 0x80) == 0;  // octet-counting detection on or off
  if (frame(stream, max_frame, octets, {}) != frame(stream, max_frame, octets, cuts)) __builtin_trap();
  return 0;
}
