#pragma once
// clientHostnameHeader: reverse DNS answers by client IP, reused for hostnameCacheTtl. One per
// io thread (no lock); bounded, since a scan from many addresses must not grow it without end.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace sluice::net {

class HostnameCache {
 public:
  static constexpr size_t kMaxEntries = 100'000;

  explicit HostnameCache(uint64_t ttl_ms) : ttl_ms_(ttl_ms) {}

  // The name stored for `ip`, unless it expired by `now_ms`.
  std::optional<std::string> find(const std::string& ip, uint64_t now_ms) const;
  // Keeps `name` for `ip` until now_ms + ttl; a full cache starts over.
  void store(const std::string& ip, std::string name, uint64_t now_ms);
  size_t size() const { return names_.size(); }

 private:
  struct Entry {
    std::string name;
    uint64_t expires_ms;
  };
  const uint64_t ttl_ms_;
  std::unordered_map<std::string, Entry> names_;
};

}  // namespace sluice::net
