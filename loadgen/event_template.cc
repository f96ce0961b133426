#include "loadgen/event_template.h"

#include <ctime>
#include <stdexcept>

namespace sluice::loadgen {
namespace {

std::string fixed_digits(uint64_t value, int digits) {
  std::string s(static_cast<size_t>(digits), '0');
  for (int i = digits - 1; i >= 0 && value; --i, value /= 10) s[static_cast<size_t>(i)] = static_cast<char>('0' + value % 10);
  return s;
}

struct Parts {
  std::string head;  // up to and including the marker
  std::string tail;  // from " HTTP/1.1" to the newline
};

Parts template_parts() {
  char syslog_time[32], apache_time[48];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(syslog_time, sizeof syslog_time, "%b %e %H:%M:%S", &tm);
  std::strftime(apache_time, sizeof apache_time, "%d/%b/%Y:%H:%M:%S +0000", &tm);
  return {std::string("<134>") + syslog_time + " lg httpd: 127.0.0.1 - - [" + apache_time + "] \"GET " +
              std::string(kMarker),
          " HTTP/1.1\" 200 512\n"};
}

}  // namespace

size_t minimum_event_size() {
  const Parts p = template_parts();
  return p.head.size() + kConnectionDigits + 1 + kSequenceDigits + p.tail.size();
}

EventWriter::EventWriter(size_t size, uint32_t connection, uint64_t first_sequence) : sequence_(first_sequence) {
  const size_t minimum = minimum_event_size();
  if (size < minimum)
    throw std::invalid_argument("--size " + std::to_string(size) + " is too small: the Apache template needs at least " +
                                std::to_string(minimum) + " bytes");
  if (connection > 99999) throw std::invalid_argument("at most 100000 connections");
  const Parts p = template_parts();
  event_ = p.head + fixed_digits(connection, kConnectionDigits) + "/";
  sequence_pos_ = event_.size();
  event_ += fixed_digits(first_sequence, kSequenceDigits);
  const size_t padding = size - minimum;
  if (padding) event_ += "?" + std::string(padding - 1, 'a');
  event_ += p.tail;
}

void EventWriter::write(std::string& out, size_t count) {
  char* digits = event_.data() + sequence_pos_;
  for (size_t n = 0; n < count; ++n) {
    out.append(event_);
    ++sequence_;
    for (int i = kSequenceDigits - 1; i >= 0; --i) {  // decimal increment in place
      if (digits[i] != '9') {
        ++digits[i];
        break;
      }
      digits[i] = '0';
    }
  }
}

std::optional<EventId> parse_event_id(std::string_view payload) {
  const size_t at = payload.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t start = at + kMarker.size();
  if (payload.size() < start + kConnectionDigits + 1 + kSequenceDigits || payload[start + kConnectionDigits] != '/')
    return std::nullopt;
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
