#pragma once
// Avro's binary encoding, the parts Flume's RPC uses (avro.apache.org/docs/1.11.1/specification,
// "Binary Encoding"): long and int as zig-zag varints, strings and bytes length-first, booleans,
// enums and union branches as ints, maps and arrays as blocks of items ended by a 0 count (a
// negative count: that many items, preceded by their size in bytes).
//
// The reader never trusts the input: every length is checked against what is left, a varint
// longer than 10 bytes or a block count past a bound is an error, and once it has failed every
// later read fails too (a caller checks ok() once, at the end).

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::avro {

class BinaryReader {
 public:
  explicit BinaryReader(std::string_view in) : in_(in) {}
  BinaryReader(const BinaryReader&) = delete;  // error_ may point into detail_
  BinaryReader& operator=(const BinaryReader&) = delete;

  int64_t read_long() {
    // Most of Flume's numbers (counts, lengths under 64) are one byte: read inline.
    if (!in_.empty() && !(static_cast<uint8_t>(in_.front()) & 0x80)) {
      const auto byte = static_cast<uint8_t>(in_.front());
      in_.remove_prefix(1);
      return static_cast<int64_t>(byte >> 1) ^ -static_cast<int64_t>(byte & 1);
    }
    return read_long_slow();
  }
  int32_t read_int();
  bool read_boolean();
  // A string or bytes value: a view into the input (valid as long as it is).
  std::string_view read_bytes();
  // `n` raw bytes (a fixed).
  std::string_view read_fixed(size_t n);
  // The next block's item count of a map or array (0: its end); a negative count's byte size is
  // read and skipped over. Counts past `max_items` fail.
  int64_t read_block_count(int64_t max_items);
  // Fails the reader with `why` (the first reason is kept).
  void fail(const char* why) {
    if (!error_) error_ = why;
    in_ = {};
  }
  void fail(std::string why) {
    if (!error_) {
      detail_ = std::move(why);
      error_ = detail_.c_str();
    }
    in_ = {};
  }

  bool ok() const { return error_ == nullptr; }
  const char* error() const { return error_ ? error_ : ""; }
  bool at_end() const { return in_.empty(); }
  size_t left() const { return in_.size(); }
  // Where it is in the input, as a pointer (to take a view of what a value occupied).
  const char* position() const { return in_.data(); }

 private:
  int64_t read_long_slow();
  std::string_view in_;
  const char* error_ = nullptr;
  std::string detail_;  // a reason made for this input (error_ points into it)
};

// Appends Avro values to a string.
class BinaryWriter {
 public:
  explicit BinaryWriter(std::string& out) : out_(out) {}
  void write_long(int64_t value);
  void write_int(int32_t value) { write_long(value); }
  void write_boolean(bool value) { out_ += value ? '\1' : '\0'; }
  void write_bytes(std::string_view value) {
    write_long(static_cast<int64_t>(value.size()));
    out_ += value;
  }
  void write_fixed(std::string_view value) { out_ += value; }

 private:
  std::string& out_;
};

}  // namespace sluice::avro
