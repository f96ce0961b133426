// libFuzzer target for the Avro source's byte path (and what the Avro sink reads): Netty's framing
// split at fuzzer-chosen offsets, a call's handshake, message and events, a response, and zlib's
// inflation for compression-type = deflate. Checks, beyond "no crash, no leak, no UB":
//   - the frames do not depend on how the stream was split across reads;
//   - no frame's message exceeds the decoder's bound, no event read past its call's bytes.
// Built and run by .ci/fuzz (clang, -fsanitize=fuzzer,address,undefined).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sources/avro/avro_deflate.h"
#include "sources/avro/avro_ipc.h"

using namespace sluice::avro;

namespace {

constexpr size_t kMaxMessage = 64 * 1024;

std::vector<Frame> frames_of(std::string_view stream, size_t cut_a, size_t cut_b, std::string& broken) {
  FrameDecoder decoder(kMaxMessage);
  std::vector<Frame> frames;
  size_t at = 0;
  for (const size_t cut : {cut_a, cut_b, stream.size()}) {
    if (cut < at || cut > stream.size()) continue;
    broken = decoder.feed(stream.substr(at, cut - at), frames);
    at = cut;
    if (!broken.empty()) break;
  }
  return frames;
}

void read_calls(const std::vector<Frame>& frames) {
  std::vector<std::string_view> events;
  for (const Frame& frame : frames) {
    if (frame.message.size() > kMaxMessage) __builtin_trap();
    for (const bool handshake : {true, false}) {
      std::string why;
      const std::optional<CallRequest> call = read_call(frame.message, handshake, why);
      if (call) {
        if (call->handshake) match_handshake(*call->handshake);
        events.clear();
        if (split_events(call->parameters, call->message == "appendBatch",
                         {.max_events = 100, .max_name = 16, .max_value = 64}, events, why)) {
          for (const std::string_view e : events) {
            if (e.data() < frame.message.data() || e.data() + e.size() > frame.message.data() + frame.message.size())
              __builtin_trap();
            FlumeEventView view;
            read_event(e, view);
          }
        }
      }
      read_response(frame.message, handshake, why);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);
  const size_t cut_a = data[0] % (input.size() + 1), cut_b = cut_a + data[1] % (input.size() - cut_a + 1);
  std::string broken_whole, broken_split;
  const std::vector<Frame> whole = frames_of(input, input.size(), input.size(), broken_whole);
  const std::vector<Frame> split = frames_of(input, cut_a, cut_b, broken_split);
  // The same frames however the bytes came (a broken stream may be found at a different read).
  if (broken_whole.empty() && broken_split.empty()) {
    if (whole.size() != split.size()) __builtin_trap();
    for (size_t i = 0; i < whole.size(); ++i)
      if (whole[i].serial != split[i].serial || whole[i].message != split[i].message) __builtin_trap();
  }
  read_calls(whole);
  // As a deflate stream: what it inflates to (at most 1 MiB looked at) framed as it comes.
  InflateStream inflater;
  FrameDecoder decoder(kMaxMessage);
  std::vector<Frame> inflated;
  size_t total = 0;
  inflater.inflate(input, 4096, [&](std::string_view piece) {
    total += piece.size();
    return total <= (1u << 20) && decoder.feed(piece, inflated).empty();
  });
  read_calls(inflated);
  return 0;
}
