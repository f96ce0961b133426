#include "channels/spillable/batch_codec.h"

#include <snappy.h>

#include <cstring>
#include <memory>

namespace sluice::spill {
namespace {

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

bool get_u32(std::string_view& in, uint32_t& v) {
  if (in.size() < 4) return false;
  std::memcpy(&v, in.data(), 4);
  in.remove_prefix(4);
  return true;
}

void put_string(std::string& out, const std::string& s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out += s;
}

bool get_string(std::string_view& in, std::string& s) {
  uint32_t n;
  if (!get_u32(in, n) || in.size() < n) return false;
  s.assign(in.data(), n);
  in.remove_prefix(n);
  return true;
}

}  // namespace

// After the bytes, when any event has headers an interceptor set (or a rewritten body): this word,
// then per event its block's offset, length and body_rewritten (event_headers.h). A record without it (every record
// written before headers existed) has none.
constexpr uint32_t kHeadersSection = 0x48445253;  // "HDRS"

// The word after the event count: the source's header names follow; the events are not syslog
// (EventKind::plain). A record written before kinds existed has 0 or 1 there: syslog events.
constexpr uint32_t kWithNames = 1;
constexpr uint32_t kPlainEvents = 2;

uint32_t event_layout_version() { return 0x5E000000u | static_cast<uint32_t>(sizeof(EventRecord)); }

void encode_batch(const EventBatch& batch, std::string& out) {
  // Plain form first: [events][names][records][bytes]. The batch may be a slice of a larger
  // storage: its records are rebased onto the bytes written here.
  std::string plain;
  uint64_t bytes = 0;
  for (const EventRecord& e : batch) bytes += e.length;
  const EventStorage* storage = batch.storage();
  const bool with_headers = !storage->headers.empty();
  // Bytes a record owns past its frame (a composed body, the client's address, its headers).
  auto extent = [&](const EventRecord& e) {
    uint64_t end = e.length;
    end = std::max<uint64_t>(end, uint64_t{e.body_offset} + e.body_length);
    end = std::max<uint64_t>(end, uint64_t{e.client_offset} + e.client_ip_length + e.client_host_length);
    if (with_headers) {
      const size_t index = static_cast<size_t>(&e - storage->events.data());
      if (index < storage->headers.size())
        end = std::max<uint64_t>(end, uint64_t{storage->headers[index].offset} + storage->headers[index].length);
    }
    return end;
  };
  plain.reserve(64 + batch.size() * sizeof(EventRecord) + bytes * 2);
  put_u32(plain, static_cast<uint32_t>(batch.size()));
  const HeaderNames* names = batch.header_names();
  put_u32(plain, (names ? kWithNames : 0) | (batch.kind() == EventKind::plain ? kPlainEvents : 0));
  if (names) {
    put_string(plain, names->port);
    put_string(plain, names->client_ip);
    put_string(plain, names->client_host);
  }
  const size_t records_at = plain.size();
  plain.resize(records_at + batch.size() * sizeof(EventRecord));
  uint32_t offset = 0;
  size_t i = 0;
  std::string data;
  data.reserve(bytes);
  for (const EventRecord& e : batch) {
    EventRecord copy = e;
    copy.offset = offset;
    const uint64_t size = extent(e);
    data.append(storage->bytes.data() + e.offset, size);
    offset += static_cast<uint32_t>(size);
    std::memcpy(plain.data() + records_at + i++ * sizeof(EventRecord), &copy, sizeof copy);
  }
  put_u32(plain, static_cast<uint32_t>(data.size()));
  plain += data;
  if (with_headers) {
    put_u32(plain, kHeadersSection);
    for (const EventRecord& e : batch) {
      const size_t index = static_cast<size_t>(&e - storage->events.data());
      const HeaderBlock block = index < storage->headers.size() ? storage->headers[index] : HeaderBlock{};
      put_u32(plain, block.offset);
      put_u32(plain, block.length);
      put_u32(plain, block.body_rewritten);
    }
  }
  std::string compressed;
  snappy::Compress(plain.data(), plain.size(), &compressed);
  out += compressed;
}

std::optional<EventBatch> decode_batch(std::string_view compressed, std::shared_ptr<CommitTracker> tracker,
                                       BatchOrigin origin) {
  std::string plain;
  if (!snappy::Uncompress(compressed.data(), compressed.size(), &plain)) return std::nullopt;
  std::string_view in(plain);
  uint32_t count, has_names;  // the flags word: kWithNames, kPlainEvents
  if (!get_u32(in, count) || !get_u32(in, has_names)) return std::nullopt;
  auto storage = std::make_shared<EventStorage>();
  if (has_names & ~(kWithNames | kPlainEvents)) return std::nullopt;
  storage->kind = has_names & kPlainEvents ? EventKind::plain : EventKind::syslog;
  if (has_names & kWithNames) {
    HeaderNames names;
    if (!get_string(in, names.port) || !get_string(in, names.client_ip) || !get_string(in, names.client_host))
      return std::nullopt;
    storage->header_names = std::make_shared<const HeaderNames>(std::move(names));
  }
  if (in.size() / sizeof(EventRecord) < count) return std::nullopt;
  storage->events.resize(count);
  std::memcpy(storage->events.data(), in.data(), count * sizeof(EventRecord));
  in.remove_prefix(count * sizeof(EventRecord));
  uint32_t size;
  if (!get_u32(in, size) || in.size() < size) return std::nullopt;
  storage->bytes.assign(in.begin(), in.begin() + size);
  in.remove_prefix(size);
  if (!in.empty()) {  // the headers section
    uint32_t marker;
    if (!get_u32(in, marker) || marker != kHeadersSection || in.size() != uint64_t{count} * 12) return std::nullopt;
    storage->headers.resize(count);
    for (HeaderBlock& block : storage->headers) {
      get_u32(in, block.offset);
      get_u32(in, block.length);
      get_u32(in, block.body_rewritten);
    }
  }
  for (size_t i = 0; i < count; ++i) {  // the CRC passed, but never trust offsets blindly
    const EventRecord& e = storage->events[i];
    if (uint64_t{e.offset} + e.length > size || uint64_t{e.offset} + e.body_offset + e.body_length > size)
      return std::nullopt;
    if (i < storage->headers.size() &&
        uint64_t{e.offset} + storage->headers[i].offset + storage->headers[i].length > size)
      return std::nullopt;
  }
  storage->tracker = std::move(tracker);
  storage->acknowledger = std::move(origin.acknowledger);
  storage->acknowledger_base = origin.acknowledger_base;
  storage->arrived_at = origin.arrived_at;
  return EventBatch::of(std::move(storage));
}

}  // namespace sluice::spill
