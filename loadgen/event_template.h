#pragma once
// The events sluice-loadgen sends. Each carries its connection id and sequence number behind
// the marker "/lg/", where the verifier finds them again:
//
// clang-format off
//   apache:  <134>Nov 30 11:07:06 lg httpd: 127.0.0.1 - - [30/Nov/2026:11:07:06 +0000] "GET /lg/00003/0000000042?aa HTTP/1.1" 200 512
//   rfc5424: <134>1 2026-11-30T11:07:06.000Z lg httpd 4242 access - GET /lg/00003/0000000042?aa HTTP/1.1 200 512
//   file:    each line of the file in turn, with " /lg/00003/0000000042" appended
// clang-format on
//
// --size is the syslog message plus its LF (apache, rfc5424: exactly; padded after the
// sequence number). With RFC 6587 octet counting the LF is replaced by a "LEN " prefix; a
// datagram (one event per UDP datagram) is the message alone, --size bytes long.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::loadgen {

inline constexpr std::string_view kMarker = "/lg/";
inline constexpr int kConnectionDigits = 5;
inline constexpr int kSequenceDigits = 10;

enum class Framing { lf, octet_counting, datagram };

struct EventFormat {
  std::string template_name = "apache";   // apache | rfc5424 | file
  std::vector<std::string> replay_lines;  // template "file": the lines to replay, in turn
  std::vector<int> priorities{134};       // apache, rfc5424: the PRI of each event, in turn (local0.info)
  size_t size = 120;
  Framing framing = Framing::lf;
};

// Reads a replay file (blank lines skipped); throws std::invalid_argument if empty or unreadable.
std::vector<std::string> read_replay_lines(const std::string& path);

// The smallest --size the template can fill (0 for file replay, whose lines set the size).
size_t minimum_event_size(const EventFormat& format);

// Writes consecutive events of one connection into a buffer without formatting each one:
// the sequence digits are incremented in place.
class EventWriter {
 public:
  // Throws std::invalid_argument for a size below the template's minimum, an unknown template,
  // or a connection id above 99999.
  EventWriter(const EventFormat& format, uint32_t connection, uint64_t first_sequence = 0);
  uint64_t next_sequence() const { return sequence_; }
  // Appends `count` events to out; with `ends`, where each one ends in out (for datagrams).
  void write(std::string& out, size_t count, std::vector<size_t>* ends = nullptr);

 private:
  struct Wire {
    std::string bytes;    // the event as sent, framing included
    size_t sequence_pos;  // where its sequence digits are
  };
  std::vector<Wire> events_;
  size_t next_ = 0;
  std::string digits_;  // the current sequence number, kSequenceDigits wide
  uint64_t sequence_;
};

struct EventId {
  uint32_t connection;
  uint64_t sequence;
};
// Finds the marker in a payload (the whole line or just its body) and reads the id back.
std::optional<EventId> parse_event_id(std::string_view payload);

}  // namespace sluice::loadgen
