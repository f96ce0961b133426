#include "agent/api/listener_pool.h"

#include <unistd.h>

namespace sluice {

ListenerPool::~ListenerPool() { settle(); }

std::string ListenerPool::key(const std::string& source, const std::string& host, uint16_t configured_port,
                              size_t index) {
  if (configured_port != 0) return host + ":" + std::to_string(configured_port);
  return source + "#" + std::to_string(index) + "@" + host;
}

void ListenerPool::expect(const std::string& key) {
  std::lock_guard lock(mutex_);
  expected_.insert(key);
}

bool ListenerPool::expects(const std::string& key) const {
  std::lock_guard lock(mutex_);
  return expected_.count(key) > 0;
}

bool ListenerPool::holds(const std::string& key) const {
  std::lock_guard lock(mutex_);
  return parked_.count(key) > 0;
}

void ListenerPool::park(const std::string& key, int fd, uint64_t note, Closer closer) {
  std::lock_guard lock(mutex_);
  auto [it, added] = parked_.try_emplace(key, Parked{fd, note, std::move(closer)});
  if (!added) ::close(fd);
}

bool ListenerPool::park_if_expected(const std::string& key, int fd, uint64_t note, Closer closer) {
  std::lock_guard lock(mutex_);
  if (!expected_.count(key)) return false;
  auto [it, added] = parked_.try_emplace(key, Parked{fd, note, std::move(closer)});
  if (!added) ::close(fd);
  return true;
}

int ListenerPool::adopt(const std::string& key, uint64_t* note) {
  std::lock_guard lock(mutex_);
  const auto it = parked_.find(key);
  if (it == parked_.end()) return -1;
  const Parked parked = it->second;
  parked_.erase(it);
  if (note) *note = parked.note;
  return parked.fd;
}

void ListenerPool::settle() {
  std::map<std::string, Parked> unadopted;
  {
    std::lock_guard lock(mutex_);
    unadopted.swap(parked_);
    expected_.clear();
  }
  // No successor took them: they close as a shutdown closes them (a closer reads what its socket
  // holds outside the lock, while old sources may still park).
  for (const auto& [key, parked] : unadopted) {
    if (parked.closer) parked.closer(parked.fd, parked.note);
    ::close(parked.fd);
  }
}

}  // namespace sluice
