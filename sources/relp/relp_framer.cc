#include "sources/relp/relp_framer.h"

namespace sluice::relp {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Reads a run of `accepted` characters (1..max_length) ending at a space or, if `lf_ends`, a LF.
// Returns its length, 0 if more input is needed, or -1 if the run is not well-formed.
template <class Accept>
int read_field(std::string_view in, size_t at, size_t max_length, Accept accepted, bool lf_ends) {
  size_t i = at;
  while (i < in.size() && i - at < max_length && accepted(in[i])) ++i;
  if (i == in.size()) return i - at <= max_length ? 0 : -1;
  const bool ends = in[i] == ' ' || (lf_ends && in[i] == '\n');
  if (i == at || !ends) return -1;
  return static_cast<int>(i - at);
}

uint32_t to_number(std::string_view digits) {
  uint32_t n = 0;
  for (char c : digits) n = n * 10 + static_cast<uint32_t>(c - '0');
  return n;
}

}  // namespace

RelpFramer::Parsed RelpFramer::parse(std::string_view in, RelpFrame& frame, size_t& used, size_t& needed,
                                     std::string& why) const {
  needed = 0;
  const int txnr_length = read_field(in, 0, 9, is_digit, false);
  if (txnr_length < 0) return why = "a frame does not start with a transaction number", Parsed::broken;
  if (txnr_length == 0) return Parsed::more;
  size_t at = static_cast<size_t>(txnr_length) + 1;
  const int command_length = read_field(in, at, 32, is_letter, false);
  if (command_length < 0) return why = "a frame has no command after its transaction number", Parsed::broken;
  if (command_length == 0) return Parsed::more;
  frame.txnr = to_number(in.substr(0, static_cast<size_t>(txnr_length)));
  frame.command = in.substr(at, static_cast<size_t>(command_length));
  at += static_cast<size_t>(command_length) + 1;
  const int datalen_length = read_field(in, at, 9, is_digit, true);
  if (datalen_length < 0) return why = "a frame has no data length after its command", Parsed::broken;
  if (datalen_length == 0) return Parsed::more;
  const size_t datalen = to_number(in.substr(at, static_cast<size_t>(datalen_length)));
  if (datalen > max_data_)
    return why = "a frame of " + std::to_string(datalen) + " bytes is larger than maxDataSize (" +
                 std::to_string(max_data_) + ")",
           Parsed::broken;
  at += static_cast<size_t>(datalen_length);
  if (datalen == 0) {
    if (in[at] != '\n') return why = "a frame with no data does not end at its length", Parsed::broken;
    frame.data = {};
    used = at + 1;
    return Parsed::frame;
  }
  if (in[at] != ' ') return why = "a frame's data length is not followed by a space", Parsed::broken;
  ++at;
  if (in.size() < at + datalen + 1) {
    needed = at + datalen + 1;
    return Parsed::more;
  }
  if (in[at + datalen] != '\n') return why = "a frame does not end with LF after its data", Parsed::broken;
  frame.data = in.substr(at, datalen);
  used = at + datalen + 1;
  return Parsed::frame;
}

std::string RelpFramer::feed(std::string_view bytes, const std::function<void(const RelpFrame&)>& on_frame) {
  // Frames are parsed in place from what was read; only a partial one is copied, to wait. A
  // partial frame whose length is known is appended to until it is whole, not parsed (nor copied)
  // again on every read.
  if (!carry_.empty() && needed_ > carry_.size() + bytes.size()) {
    carry_.append(bytes);
    copied_ += bytes.size();
    return "";
  }
  std::string joined;
  std::string_view in = bytes;
  if (!carry_.empty()) {
    joined = std::move(carry_);
    joined.append(bytes);
    copied_ += bytes.size();
    carry_.clear();
    in = joined;
  }
  std::string why;
  size_t needed = 0;
  while (!in.empty()) {
    RelpFrame frame;
    size_t used = 0;
    const Parsed parsed = parse(in, frame, used, needed, why);
    if (parsed == Parsed::broken) return why;
    if (parsed == Parsed::more) break;
    on_frame(frame);
    in.remove_prefix(used);
  }
  if (in.data() == joined.data() && !joined.empty()) {
    carry_ = std::move(joined);  // nothing whole came: the same partial frame, kept without a copy
  } else {
    carry_.assign(in);
    copied_ += in.size();
  }
  needed_ = carry_.empty() ? 0 : needed;
  return "";
}

}  // namespace sluice::relp
