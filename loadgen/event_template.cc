#include "loadgen/event_template.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <stdexcept>

namespace sluice::loadgen {
namespace {

std::string fixed_digits(uint64_t value, int digits) {
  std::string s(static_cast<size_t>(digits), '0');
  for (int i = digits - 1; i >= 0 && value; --i, value /= 10)
    s[static_cast<size_t>(i)] = static_cast<char>('0' + value % 10);
  return s;
}

// A fixed template around the marker: head (ending in the marker) + id + padding + tail.
struct Parts {
  std::string head;
  std::string tail;  // without the LF
};

Parts template_parts(const std::string& name, int priority) {
  const std::string pri = "<" + std::to_string(priority) + ">";
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  if (name == "apache") {
    char syslog_time[32], apache_time[48];
    std::strftime(syslog_time, sizeof syslog_time, "%b %e %H:%M:%S", &tm);
    std::strftime(apache_time, sizeof apache_time, "%d/%b/%Y:%H:%M:%S +0000", &tm);
    return {pri + syslog_time + " lg httpd: 127.0.0.1 - - [" + apache_time + "] \"GET " + std::string(kMarker),
            " HTTP/1.1\" 200 512"};
  }
  if (name == "rfc5424") {
    char timestamp[40];
    std::strftime(timestamp, sizeof timestamp, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
    return {pri + "1 " + timestamp + " lg httpd 4242 access - GET " + std::string(kMarker), " HTTP/1.1 200 512"};
  }
  throw std::invalid_argument("unknown template \"" + name + "\" (apache, rfc5424, file)");
}

constexpr size_t kIdLength = kConnectionDigits + 1 + kSequenceDigits;

// Frames one syslog message (no LF) for the wire; `sequence_pos` moves with any prefix.
std::string frame(const std::string& message, Framing framing, size_t& sequence_pos) {
  if (framing == Framing::lf) return message + "\n";
  if (framing == Framing::datagram) return message;
  const std::string prefix = std::to_string(message.size()) + " ";
  sequence_pos += prefix.size();
  return prefix + message;
}

}  // namespace

std::vector<std::string> read_replay_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read replay file " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.empty()) throw std::invalid_argument("replay file " + path + " has no lines");
  return lines;
}

// The smallest size of an event with this PRI.
size_t minimum_size(const EventFormat& format, int priority) {
  const Parts p = template_parts(format.template_name, priority);
  const size_t framing_bytes = format.framing == Framing::datagram ? 0 : 1;  // the LF, or its place in a prefix
  return p.head.size() + kIdLength + p.tail.size() + framing_bytes;
}

size_t minimum_event_size(const EventFormat& format) {
  if (format.template_name == "file") return 0;
  size_t minimum = 0;
  for (const int priority : format.priorities) minimum = std::max(minimum, minimum_size(format, priority));
  return minimum;
}

EventWriter::EventWriter(const EventFormat& format, uint32_t connection, uint64_t first_sequence)
    : digits_(fixed_digits(first_sequence, kSequenceDigits)), sequence_(first_sequence) {
  if (connection > 99999) throw std::invalid_argument("at most 100000 connections");
  const std::string id_prefix = fixed_digits(connection, kConnectionDigits) + "/";
  if (format.template_name == "file") {
    for (const std::string& line : format.replay_lines) {
      const std::string message = line + " " + std::string(kMarker) + id_prefix;
      size_t pos = message.size();
      std::string bytes = frame(message + digits_, format.framing, pos);
      events_.push_back({std::move(bytes), pos});
    }
    return;
  }
  const size_t minimum = minimum_event_size(format);
  if (format.size < minimum)
    throw std::invalid_argument("--size " + std::to_string(format.size) + " is too small: the " + format.template_name +
                                " template needs at least " + std::to_string(minimum) + " bytes");
  for (const int priority : format.priorities) {  // each padded to the same size
    const Parts p = template_parts(format.template_name, priority);
    std::string message = p.head + id_prefix;
    size_t pos = message.size();
    message += digits_;
    const size_t padding = format.size - minimum_size(format, priority);
    if (padding) message += "?" + std::string(padding - 1, 'a');
    message += p.tail;
    std::string bytes = frame(message, format.framing, pos);
    events_.push_back({std::move(bytes), pos});
  }
}

void EventWriter::write(std::string& out, size_t count, std::vector<size_t>* ends) {
  for (size_t n = 0; n < count; ++n) {
    const Wire& event = events_[next_];
    next_ = next_ + 1 == events_.size() ? 0 : next_ + 1;
    const size_t at = out.size();
    out.append(event.bytes);
    out.replace(at + event.sequence_pos, kSequenceDigits, digits_);
    if (ends) ends->push_back(out.size());
    ++sequence_;
    for (int i = kSequenceDigits - 1; i >= 0; --i) {  // decimal increment in place
      char& d = digits_[static_cast<size_t>(i)];
      if (d != '9') {
        ++d;
        break;
      }
      d = '0';
    }
  }
}

std::optional<EventId> parse_event_id(std::string_view payload) {
  const size_t at = payload.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t start = at + kMarker.size();
  if (payload.size() < start + kIdLength || payload[start + kConnectionDigits] != '/') return std::nullopt;
  EventId id{0, 0};
  for (int i = 0; i < kConnectionDigits; ++i) {
    const char c = payload[start + static_cast<size_t>(i)];
    if (c < '0' || c > '9') return std::nullopt;
    id.connection = id.connection * 10 + static_cast<uint32_t>(c - '0');
  }
  for (int i = 0; i < kSequenceDigits; ++i) {
    const char c = payload[start + kConnectionDigits + 1 + static_cast<size_t>(i)];
    if (c < '0' || c > '9') return std::nullopt;
    id.sequence = id.sequence * 10 + static_cast<uint64_t>(c - '0');
  }
  return id;
}

}  // namespace sluice::loadgen
