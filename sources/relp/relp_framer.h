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

 private:
  enum class Parsed { frame, more, broken };
  // One frame at the start of `in`: its length in `used`, or why not.
  Parsed parse(std::string_view in, RelpFrame& frame, size_t& used, std::string& why) const;

  const size_t max_data_;
  std::string carry_;
};

}  // namespace sluice::relp
