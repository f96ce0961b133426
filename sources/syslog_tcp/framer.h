#pragma once
// Splits one connection's byte stream into syslog frames. Owned by the connection; used on
// its io thread only.
//
// Framing is detected per frame, as rsyslog's imtcp does (RFC 6587):
//  - octet counting (3.4.1): a frame that starts with a digit 1-9 is "<length> <bytes>";
//  - non-transparent framing (3.4.2): anything else (normally '<') ends at LF or NUL; a CR
//    before the terminator is dropped.
// A number that is not plausible as a count is not trusted, and the frame is an ordinary
// line: digits not followed by a space within 10 characters; a count larger than
// max_count_for(max_frame) — 200,000 bytes, rsyslog's MaxFrameSize, or max_frame if larger (no
// sender frames that much: "1700000000 web01 ..." is an epoch, not 1.7 GB to skip); or a count
// whose frame does not begin with '<' (every SYSLOG-MSG begins with its PRI, so "200 OK ..." is a
// line, not 200 bytes to take). With auto-detection off (framing = non-transparent) every frame
// is a line.
//
// A frame longer than max_frame is cut at max_frame (marked truncated) and its rest is skipped
// without being buffered: up to the next terminator for a line, exactly the counted bytes for an
// octet-counted frame (so the frames after it, which need not be LF-separated, stay in sync).
// Empty frames are counted and skipped. A partial frame waits in the connection's carry-over
// buffer, never longer than max_frame + 1 bytes: this is the per-connection buffer limit.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "sources/net/stream_protocol.h"
#include "sources/pipeline/message_traits.h"
#include "sources/syslog/byte_scan.h"

namespace sluice::syslog_tcp {

using namespace ::sluice::syslog;
using pipeline::MessageTraits;

// frames, octet_counted, blank_lines; truncated: longer than max_frame, or an octet count the
// sender did not keep; cut: partial frames we cut by closing the connection (finish(cut = true)).
using FramerCounters = net::ReadTally;

class Framer {
 public:
  explicit Framer(size_t max_frame, bool detect_octet_counting = true)
      : max_frame_(max_frame), max_count_(max_count_for(max_frame)), detect_octets_(detect_octet_counting) {}

  // The largest octet count taken as one: rsyslog's MaxFrameSize (200,000), or max_frame if larger.
  static constexpr size_t max_count_for(size_t max_frame) { return std::max<size_t>(max_frame, 200'000); }

  // Calls on_frame(std::string_view frame, MessageTraits traits) for each complete frame in data:
  // traits.truncated as below; traits.ascii when the frame came whole in one read and its scan
  // saw no byte at or above 0x80. The view is valid only during the call.
  template <class OnFrame>
  void feed(std::string_view data, OnFrame&& on_frame, FramerCounters& counters);

  // End of stream. cut = false: the sender closed, so an unterminated last line is still a
  // whole frame. cut = true: we are closing the connection (shutdown, idleTimeout) and a
  // partial frame is emitted as truncated (Incomplete), since its end may still have been on
  // its way. An octet-counted frame cut short is truncated either way.
  template <class OnFrame>
  void finish(OnFrame&& on_frame, FramerCounters& counters, bool cut = false);

  size_t buffered() const { return carry_.size(); }

 private:
  // octet_space: "<digits> " seen, waiting for the frame's first byte to tell a count from a line.
  enum class State : uint8_t { frame_start, line, skip_line, octet_length, octet_space, octet_body };
  static constexpr size_t kMaxLengthDigits = 10;

  // truncated or cut: the frame is not whole (the event is Incomplete); counted as one or the other.
  template <class OnFrame>
  void emit(std::string_view frame, bool truncated, OnFrame& on_frame, FramerCounters& counters, bool cut = false,
            bool ascii = false);
  template <class OnFrame>
  void feed_line(std::string_view& data, OnFrame& on_frame, FramerCounters& counters);
  template <class OnFrame>
  void feed_octets(std::string_view& data, OnFrame& on_frame, FramerCounters& counters);
  // The end of a line: the first LF or NUL in data, or data.size(); and whether all before it is ASCII.
  static size_t terminator(std::string_view data, bool& found, bool& ascii);

  const size_t max_frame_;
  const size_t max_count_;
  const bool detect_octets_;
  State state_ = State::frame_start;
  std::string carry_;       // the start of a frame whose end has not arrived
  uint64_t counted_ = 0;    // octet counting: the frame's declared length
  uint64_t remaining_ = 0;  // octet counting: bytes of the frame still to come
};

inline size_t Framer::terminator(std::string_view data, bool& found, bool& ascii) {
  const size_t end = find_line_end(data, 0, ascii);
  found = end < data.size();
  return end;
}

template <class OnFrame>
void Framer::emit(std::string_view frame, bool truncated, OnFrame& on_frame, FramerCounters& counters, bool cut,
                  bool ascii) {
  // An octet-counted frame may carry its sender's line end inside the count.
  if (!frame.empty() && frame.back() == '\n') frame.remove_suffix(1);
  if (!frame.empty() && frame.back() == '\r') frame.remove_suffix(1);
  if (frame.empty()) {
    ++counters.blank_lines;
    return;
  }
  ++counters.frames;
  if (truncated)
    ++counters.truncated;
  else if (cut)
    ++counters.cut;
  on_frame(frame, MessageTraits{.truncated = truncated || cut, .ascii = ascii});
}

template <class OnFrame>
void Framer::feed(std::string_view data, OnFrame&& on_frame, FramerCounters& counters) {
  while (!data.empty()) {
    switch (state_) {
      case State::frame_start:
        if (detect_octets_ && data[0] >= '1' && data[0] <= '9') {
          state_ = State::octet_length;
          counted_ = 0;
        } else {
          state_ = State::line;
        }
        break;
      case State::line:
      case State::skip_line: feed_line(data, on_frame, counters); break;
      case State::octet_length:
      case State::octet_space:
      case State::octet_body: feed_octets(data, on_frame, counters); break;
    }
  }
}

template <class OnFrame>
void Framer::feed_line(std::string_view& data, OnFrame& on_frame, FramerCounters& counters) {
  bool ended = false, ascii = false;
  const size_t chunk = terminator(data, ended, ascii);
  if (state_ == State::skip_line) {
    if (ended) state_ = State::frame_start;
  } else {
    // The frame's length without the CR before its terminator; an unterminated chunk may end
    // in that CR, so one byte more than max_frame is kept until the terminator shows.
    const bool cr_before_end = ended && (chunk ? data[chunk - 1] == '\r' : !carry_.empty() && carry_.back() == '\r');
    const size_t length = carry_.size() + chunk - (cr_before_end ? 1 : 0);
    const size_t limit = ended ? max_frame_ : max_frame_ + 1;
    if (length > limit) {
      carry_.append(data.data(), max_frame_ - std::min(max_frame_, carry_.size()));
      carry_.resize(max_frame_);
      emit(carry_, true, on_frame, counters);
      carry_.clear();
      state_ = ended ? State::frame_start : State::skip_line;
    } else if (ended && carry_.empty()) {
      emit(data.substr(0, chunk), false, on_frame, counters, false, ascii);  // the fast path: no copy
      state_ = State::frame_start;
    } else if (ended) {
      carry_.append(data.data(), chunk);
      emit(carry_, false, on_frame, counters);
      carry_.clear();
      state_ = State::frame_start;
    } else {
      carry_.append(data.data(), chunk);
    }
  }
  data.remove_prefix(ended ? chunk + 1 : chunk);
}

template <class OnFrame>
void Framer::feed_octets(std::string_view& data, OnFrame& on_frame, FramerCounters& counters) {
  if (state_ == State::octet_length) {
    // The digits (and the space) are kept in carry_ so that a "length" that turns out not to
    // be one can become the start of an ordinary line.
    size_t i = 0;
    while (i < data.size() && data[i] >= '0' && data[i] <= '9' && carry_.size() < kMaxLengthDigits) {
      counted_ = counted_ * 10 + static_cast<uint64_t>(data[i] - '0');
      carry_.push_back(data[i++]);
    }
    data.remove_prefix(i);
    if (data.empty()) return;
    if (data[0] != ' ' || counted_ > max_count_) {  // not octet counting after all
      state_ = State::line;
      return;
    }
    carry_.push_back(' ');
    data.remove_prefix(1);
    state_ = State::octet_space;
    if (data.empty()) return;
  }
  if (state_ == State::octet_space) {
    if (data[0] != '<') {  // no PRI: the digits began a line
      state_ = State::line;
      return;
    }
    carry_.clear();
    remaining_ = counted_;
    state_ = State::octet_body;
    ++counters.octet_counted;
  }
  const size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size()));
  const bool oversized = counted_ > max_frame_;
  if (take == remaining_ && carry_.empty() && !oversized) {
    emit(data.substr(0, take), false, on_frame, counters);  // the whole frame in this read
  } else {
    const size_t room = max_frame_ - std::min(max_frame_, carry_.size());
    carry_.append(data.data(), std::min(take, room));
    if (take == remaining_) emit(carry_, oversized, on_frame, counters);
  }
  remaining_ -= take;
  data.remove_prefix(take);
  if (remaining_ == 0) {
    carry_.clear();
    state_ = State::frame_start;
  }
}

template <class OnFrame>
void Framer::finish(OnFrame&& on_frame, FramerCounters& counters, bool cut) {
  if (!carry_.empty() && (state_ == State::line || state_ == State::octet_length || state_ == State::octet_space)) {
    // The carry may hold one byte more than max_frame, kept for a CR that a terminator would
    // have dropped; at the end of the stream none comes, so cut it like any oversized frame.
    std::string_view frame = carry_;
    if (frame.back() == '\r') frame.remove_suffix(1);
    const bool oversized = frame.size() > max_frame_;
    emit(oversized ? frame.substr(0, max_frame_) : frame, oversized, on_frame, counters, cut);
  } else if (state_ == State::octet_body && !carry_.empty()) {
    emit(carry_, !cut, on_frame, counters, cut);  // more bytes were promised than came
  }
  carry_.clear();
  state_ = State::frame_start;
}

}  // namespace sluice::syslog_tcp
