#include "sources/avro/avro_binary.h"

namespace sluice::avro {

int64_t BinaryReader::read_long_slow() {
  uint64_t value = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (in_.empty()) {
      fail("a number ends early");
      return 0;
    }
    const auto byte = static_cast<uint8_t>(in_.front());
    in_.remove_prefix(1);
    value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (!(byte & 0x80)) return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
  }
  fail("a number longer than 10 bytes");
  return 0;
}

int32_t BinaryReader::read_int() {
  const int64_t value = read_long();
  if (value < INT32_MIN || value > INT32_MAX) {
    fail("an int out of range");
    return 0;
  }
  return static_cast<int32_t>(value);
}

bool BinaryReader::read_boolean() {
  if (in_.empty()) {
    fail("a boolean ends early");
    return false;
  }
  const char byte = in_.front();
  in_.remove_prefix(1);
  if (byte != 0 && byte != 1) fail("a boolean that is neither 0 nor 1");
  return byte == 1;
}

std::string_view BinaryReader::read_bytes() {
  const int64_t length = read_long();
  if (length < 0 || static_cast<uint64_t>(length) > in_.size()) {
    fail(length < 0 ? "a negative length" : "a length past the end of the message");
    return {};
  }
  const std::string_view value = in_.substr(0, static_cast<size_t>(length));
  in_.remove_prefix(static_cast<size_t>(length));
  return value;
}

std::string_view BinaryReader::read_fixed(size_t n) {
  if (in_.size() < n) {
    fail("a fixed value ends early");
    return {};
  }
  const std::string_view value = in_.substr(0, n);
  in_.remove_prefix(n);
  return value;
}

int64_t BinaryReader::read_block_count(int64_t max_items) {
  int64_t count = read_long();
  if (count < 0) {
    if (count == INT64_MIN) {
      fail("a block count out of range");
      return 0;
    }
    count = -count;
    const int64_t size = read_long();  // the block's bytes: not needed to read its items
    if (size < 0) fail("a negative block size");
  }
  if (count > max_items) {
    fail("more items than the bound");
    return 0;
  }
  return ok() ? count : 0;
}

void BinaryWriter::write_long(int64_t value) {
  uint64_t zigzag = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  while (zigzag >= 0x80) {
    out_ += static_cast<char>((zigzag & 0x7F) | 0x80);
    zigzag >>= 7;
  }
  out_ += static_cast<char>(zigzag);
}

}  // namespace sluice::avro
