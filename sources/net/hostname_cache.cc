#include "sources/net/hostname_cache.h"

namespace sluice::net {

std::optional<std::string> HostnameCache::find(const std::string& ip, uint64_t now_ms) const {
  const auto it = names_.find(ip);
  if (it == names_.end() || it->second.expires_ms <= now_ms) return std::nullopt;
  return it->second.name;
}

void HostnameCache::store(const std::string& ip, std::string name, uint64_t now_ms) {
  if (names_.size() >= kMaxEntries && !names_.count(ip)) names_.clear();
  names_[ip] = Entry{std::move(name), now_ms + ttl_ms_};
}

}  // namespace sluice::net
