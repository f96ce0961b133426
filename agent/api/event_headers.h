#pragma once
// Headers beyond an event's parsed fields: what interceptors set, change or remove (Flume's event
// headers). They cost nothing until an interceptor sets one: an event's headers are one block of
// bytes in its batch's buffer, right after what parsing appended for it (so a range of events
// still occupies one span), and the storage's `headers` vector, empty until then, says where each
// event's block lies.
//
// A block is a list of entries, later ones overriding earlier ones of the same name:
//   [u8 name length][name][u16 value length, little-endian][value]
// with the value length 0xFFFF for "removed" (a parsed field of that name is hidden too).

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// Where an event's header block lies: relative to the event's offset; length 0: it has none. And
// whether an interceptor rewrote its body (search_replace): then the body is its message too (the
// JSON format's "message" is the rewritten text, not the frame's).
struct HeaderBlock {
  uint32_t offset = 0;
  uint32_t length = 0;
  uint32_t body_rewritten = 0;
};

inline constexpr uint16_t kRemovedHeader = 0xFFFF;
inline constexpr size_t kHeaderNameMax = 255;
inline constexpr size_t kHeaderValueMax = 0xFFFE;

// One entry of a block; `removed`: the header is gone (value empty).
struct HeaderEntry {
  std::string_view name;
  std::string_view value;
  bool removed = false;
};

// Reads a block's entries in order. A malformed block (never written by Sluice: a damaged
// record) ends the iteration.
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view block) : rest_(block) {}
  bool next(HeaderEntry& entry) {
    if (rest_.empty()) return false;
    const size_t name_length = static_cast<uint8_t>(rest_[0]);
    if (rest_.size() < 1 + name_length + 2) return stop();
    entry.name = rest_.substr(1, name_length);
    uint16_t value_length;
    std::memcpy(&value_length, rest_.data() + 1 + name_length, 2);
    rest_.remove_prefix(1 + name_length + 2);
    entry.removed = value_length == kRemovedHeader;
    const size_t length = entry.removed ? 0 : value_length;
    if (rest_.size() < length) return stop();
    entry.value = rest_.substr(0, length);
    rest_.remove_prefix(length);
    return true;
  }

 private:
  bool stop() {
    rest_ = {};
    return false;
  }
  std::string_view rest_;
};

// The last entry of `block` named `name` (later entries override earlier ones), if any.
inline std::optional<HeaderEntry> last_entry(std::string_view block, std::string_view name) {
  std::optional<HeaderEntry> found;
  HeaderReader reader(block);
  for (HeaderEntry entry; reader.next(entry);)
    if (entry.name == name) found = entry;
  return found;
}

// Builds a block. Names longer than kHeaderNameMax and values longer than kHeaderValueMax are
// cut there (a header is a short value: Flume's interceptors never make longer ones).
class HeaderWriter {
 public:
  void set(std::string_view name, std::string_view value) { add(name, value, false); }
  void remove(std::string_view name) { add(name, {}, true); }
  void clear() { block_.clear(); }
  bool empty() const { return block_.empty(); }
  const std::string& block() const { return block_; }
  // The value the block gives `name` so far: nullopt if it does not mention it; a removed
  // header as removed.
  std::optional<HeaderEntry> find(std::string_view name) const { return last_entry(block_, name); }

 private:
  void add(std::string_view name, std::string_view value, bool removed) {
    name = name.substr(0, kHeaderNameMax);
    value = value.substr(0, kHeaderValueMax);
    block_ += static_cast<char>(name.size());
    block_ += name;
    const uint16_t length = removed ? kRemovedHeader : static_cast<uint16_t>(value.size());
    block_.append(reinterpret_cast<const char*>(&length), 2);
    block_ += value;
  }
  std::string block_;
};

}  // namespace sluice
