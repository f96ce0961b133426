#pragma once
// The events sluice-loadgen sends: Apache access-log lines as RFC 3164 syslog, exactly
// `size` bytes including the newline, each carrying its connection id and sequence number
// in the request path, where the verifier finds them again:
//
//   <134>Nov 30 11:07:06 lg httpd: 127.0.0.1 - - [30/Nov/2026:11:07:06 +0000] "GET /lg/00003/0000000042?aa HTTP/1.1" 200 512\n
//                                                                                  ^conn  ^sequence   ^padding to size

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::loadgen {

inline constexpr std::string_view kMarker = "/lg/";
inline constexpr int kConnectionDigits = 5;
inline constexpr int kSequenceDigits = 10;

// The smallest --size the template can fill.
size_t minimum_event_size();

// Writes consecutive events of one connection into a buffer without formatting each one:
// the sequence digits are incremented in place.
class EventWriter {
 public:
  // Throws std::invalid_argument if size < minimum_event_size() or connection > 99999.
  EventWriter(size_t size, uint32_t connection, uint64_t first_sequence = 0);
  size_t size() const { return event_.size(); }
  uint64_t next_sequence() const { return sequence_; }
  // Appends `count` events to out.
  void write(std::string& out, size_t count);

 private:
  std::string event_;
  size_t sequence_pos_;
  uint64_t sequence_;
};

struct EventId {
  uint32_t connection;
  uint64_t sequence;
};
// Finds the marker in a payload (the whole line or just its body) and reads the id back.
std::optional<EventId> parse_event_id(std::string_view payload);

}  // namespace sluice::loadgen
