#pragma once
// RELP frames out of a byte stream (rsyslog's RELP, as librelp speaks it):
//
//   TXNR SP COMMAND SP DATALEN [SP DATA] LF
//
// TXNR 1-9 digits; COMMAND 1-32 letters (open, syslog, close, rsp, serverclose); DATALEN 1-9
// digits, DATA exactly that many bytes (none, and no SP, when it is 0). A partial frame waits in
// the carry-over buffer, which never holds more than one frame: maxDataSize bounds it.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace sluice::relp {

struct RelpFrame {
  uint32_t txnr = 0;
  std::string_view command;
  std::string_view data;
};

class RelpFramer {
 public:
  explicit RelpFramer(size_t max_data) : max_data_(max_data) {}
  // Calls on_frame for each whole frame. Returns "" or why the stream is not RELP (the frames
  // before the broken one were delivered; nothing after it is read).
  std::string feed(std::string_view bytes, const std::function<void(const RelpFrame&)>& on_frame);
  size_t buffered() const { return carry_.size(); }
  // Bytes copied into the carry-over buffer so far: linear in what was fed, however it is split
  // (a frame trickled a byte at a time is appended to, not copied again on each read).
  uint64_t copied() const { return copied_; }

 private:
  enum class Parsed { frame, more, broken };
  // One frame at the start of `in`: its length in `used`, or why not; for `more`, the frame's
  // whole length in `needed` once its header is known (0 before).
  Parsed parse(std::string_view in, RelpFrame& frame, size_t& used, size_t& needed, std::string& why) const;

  const size_t max_data_;
  std::string carry_;
  size_t needed_ = 0;  // the carried frame's whole length, once its header is known
  uint64_t copied_ = 0;
};

}  // namespace sluice::relp
