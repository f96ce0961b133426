#pragma once
// Splits one connection's byte stream into syslog frames. Owned by the connection; used on
// its io thread only.
//
// Non-transparent framing (RFC 6587 3.4.2): a frame ends at LF; a CR before the LF is
// dropped. A frame longer than max_frame is cut at max_frame (marked truncated) and the rest,
// up to the next LF, is skipped without being buffered. Empty lines are counted and skipped.
// A partial frame waits in the connection's carry-over buffer, never longer than max_frame.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sluice::syslog_tcp {

struct FramerCounters {
  uint64_t frames = 0;
  uint64_t blank_lines = 0;
  uint64_t truncated = 0;
};

class LineFramer {
 public:
  explicit LineFramer(size_t max_frame) : max_frame_(max_frame) {}

  // Calls on_frame(std::string_view frame, bool truncated) for each complete frame in data.
  // The view is valid only during the call.
  template <class OnFrame>
  void feed(std::string_view data, OnFrame&& on_frame, FramerCounters& counters);

  // End of stream: an unterminated last frame is still a frame.
  template <class OnFrame>
  void finish(OnFrame&& on_frame, FramerCounters& counters);

  size_t buffered() const { return carry_.size(); }

 private:
  template <class OnFrame>
  void emit(std::string_view frame, bool truncated, OnFrame& on_frame, FramerCounters& counters);

  const size_t max_frame_;
  std::string carry_;        // the start of a frame whose end has not arrived
  bool skipping_ = false;    // dropping the remainder of an oversized frame until LF
};

template <class OnFrame>
void LineFramer::emit(std::string_view frame, bool truncated, OnFrame& on_frame,
                      FramerCounters& counters) {
  if (!frame.empty() && frame.back() == '\r') frame.remove_suffix(1);
  if (frame.empty()) {
    ++counters.blank_lines;
    return;
  }
  ++counters.frames;
  if (truncated) ++counters.truncated;
  on_frame(frame, truncated);
}

template <class OnFrame>
void LineFramer::feed(std::string_view data, OnFrame&& on_frame, FramerCounters& counters) {
  while (!data.empty()) {
    const char* lf = static_cast<const char*>(std::memchr(data.data(), '\n', data.size()));
    const size_t chunk = lf ? static_cast<size_t>(lf - data.data()) : data.size();
    if (skipping_) {
      if (lf) skipping_ = false;
    } else {
      // The frame's length without the CR of a CRLF; an unterminated chunk may end in that CR.
      const bool cr_before_lf =
          lf && (chunk ? data[chunk - 1] == '\r' : !carry_.empty() && carry_.back() == '\r');
      const size_t length = carry_.size() + chunk - (cr_before_lf ? 1 : 0);
      const size_t limit = lf ? max_frame_ : max_frame_ + 1;
      if (length > limit) {
        carry_.append(data.data(), max_frame_ - std::min(max_frame_, carry_.size()));
        carry_.resize(max_frame_);
        emit(carry_, true, on_frame, counters);
        carry_.clear();
        skipping_ = !lf;
      } else if (lf && carry_.empty()) {
        emit(data.substr(0, chunk), false, on_frame, counters);  // the fast path: no copy
      } else if (lf) {
        carry_.append(data.data(), chunk);
        emit(carry_, false, on_frame, counters);
        carry_.clear();
      } else {
        carry_.append(data.data(), chunk);
      }
    }
    if (!lf) return;
    data.remove_prefix(chunk + 1);
  }
}

template <class OnFrame>
void LineFramer::finish(OnFrame&& on_frame, FramerCounters& counters) {
  if (!carry_.empty() && !skipping_) {
    // The carry may hold one byte more than max_frame, kept for a CR that an LF would have
    // dropped; at the end of the stream no LF comes, so cut it like any oversized frame.
    std::string_view frame = carry_;
    if (frame.back() == '\r') frame.remove_suffix(1);
    const bool truncated = frame.size() > max_frame_;
    emit(truncated ? frame.substr(0, max_frame_) : frame, truncated, on_frame, counters);
  }
  carry_.clear();
  skipping_ = false;
}

}  // namespace sluice::syslog_tcp
