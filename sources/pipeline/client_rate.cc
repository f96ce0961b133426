#include "sources/pipeline/client_rate.h"

#include <netinet/in.h>

#include <algorithm>
#include <cmath>
#include <ctime>

namespace sluice::pipeline {
namespace {

// The client's address as a key: its family and bytes, no port (a client's connections come
// from many ports).
std::string address_key(const sockaddr_storage& client) {
  if (client.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(client);
    return std::string(reinterpret_cast<const char*>(&v4.sin_addr), sizeof v4.sin_addr);
  }
  if (client.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(client);
    const auto* bytes = reinterpret_cast<const unsigned char*>(&v6.sin6_addr);
    // An IPv4 client on a dual-stack socket is the same client as over IPv4.
    static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::equal(bytes, bytes + 12, kMapped)) return std::string(reinterpret_cast<const char*>(bytes + 12), 4);
    return std::string(reinterpret_cast<const char*>(bytes), 16);
  }
  return {};  // unix sockets and the like: one client
}

}  // namespace

int64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

ClientBudget::ClientBudget(const ClientRateLimits& limits, int64_t now_ns)
    : limits_(limits),
      events_(static_cast<double>(limits.events_per_second)),
      bytes_(static_cast<double>(limits.bytes_per_second)),
      last_ns_(now_ns) {}

// Each second adds a second's worth, up to a second's worth kept (the burst).
void ClientBudget::refill(int64_t now_ns) {
  if (now_ns <= last_ns_) return;
  const double seconds = static_cast<double>(now_ns - last_ns_) / 1e9;
  last_ns_ = now_ns;
  if (limits_.events_per_second > 0) {
    const auto rate = static_cast<double>(limits_.events_per_second);
    events_ = std::min(rate, events_ + rate * seconds);
  }
  if (limits_.bytes_per_second > 0) {
    const auto rate = static_cast<double>(limits_.bytes_per_second);
    bytes_ = std::min(rate, bytes_ + rate * seconds);
  }
}

std::chrono::milliseconds ClientBudget::charge(uint64_t events, uint64_t bytes, int64_t now_ns) {
  std::lock_guard lock(mutex_);
  refill(now_ns);
  double wait_seconds = 0;
  if (limits_.events_per_second > 0) {
    events_ -= static_cast<double>(events);
    if (events_ < 0) wait_seconds = std::max(wait_seconds, -events_ / static_cast<double>(limits_.events_per_second));
  }
  if (limits_.bytes_per_second > 0) {
    bytes_ -= static_cast<double>(bytes);
    if (bytes_ < 0) wait_seconds = std::max(wait_seconds, -bytes_ / static_cast<double>(limits_.bytes_per_second));
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(wait_seconds * 1000)));
}

bool ClientBudget::admit(uint64_t bytes, int64_t now_ns) {
  std::lock_guard lock(mutex_);
  refill(now_ns);
  const bool events_fit = limits_.events_per_second <= 0 || events_ >= 1;
  const bool bytes_fit = limits_.bytes_per_second <= 0 || bytes_ >= static_cast<double>(bytes);
  if (!events_fit || !bytes_fit) return false;
  if (limits_.events_per_second > 0) events_ -= 1;
  if (limits_.bytes_per_second > 0) bytes_ -= static_cast<double>(bytes);
  return true;
}

bool ClientBudget::held(int64_t now_ns) const {
  std::lock_guard lock(mutex_);
  const double seconds = now_ns > last_ns_ ? static_cast<double>(now_ns - last_ns_) / 1e9 : 0;
  // UDP's budget is never in debt: one with less than one event left is holding its datagrams.
  const bool events_short =
      limits_.events_per_second > 0 && events_ + static_cast<double>(limits_.events_per_second) * seconds < 1;
  const bool bytes_short =
      limits_.bytes_per_second > 0 && bytes_ + static_cast<double>(limits_.bytes_per_second) * seconds < 1;
  return events_short || bytes_short;
}

bool ClientBudget::rested(int64_t now_ns) const {
  std::lock_guard lock(mutex_);
  const double seconds = now_ns > last_ns_ ? static_cast<double>(now_ns - last_ns_) / 1e9 : 0;
  return seconds >= 1 || (events_ >= static_cast<double>(limits_.events_per_second) &&
                          bytes_ >= static_cast<double>(limits_.bytes_per_second));
}

std::shared_ptr<ClientBudget> ClientBudgets::of(const sockaddr_storage& client, int64_t now_ns) {
  std::string key = address_key(client);
  std::lock_guard lock(mutex_);
  if (const auto it = budgets_.find(key); it != budgets_.end()) return it->second;
  // Swept as the map doubles, and at the bound at most once a second (a flood of new addresses
  // must not make every lookup a sweep).
  if (budgets_.size() >= sweep_at_ || (budgets_.size() >= kTrackedClientsMax && now_ns - swept_ns_ >= 1'000'000'000)) {
    forget_rested(now_ns);
    swept_ns_ = now_ns;
    sweep_at_ = std::max<size_t>(1024, budgets_.size() * 2);
  }
  if (budgets_.size() >= kTrackedClientsMax) {
    if (!shared_) shared_ = std::make_shared<ClientBudget>(limits_, now_ns);
    return shared_;
  }
  auto budget = std::make_shared<ClientBudget>(limits_, now_ns);
  budgets_.emplace(std::move(key), budget);
  return budget;
}

// A budget no connection holds and whose client has not spent from it for a second: forgotten
// (a new one starts whole, which is what it would have refilled to).
void ClientBudgets::forget_rested(int64_t now_ns) {
  std::erase_if(budgets_,
                [&](const auto& entry) { return entry.second.use_count() == 1 && entry.second->rested(now_ns); });
}

uint64_t ClientBudgets::held(int64_t now_ns) const {
  std::lock_guard lock(mutex_);
  uint64_t count = 0;
  for (const auto& [key, budget] : budgets_) count += budget->held(now_ns);
  if (shared_ && shared_->held(now_ns)) ++count;
  return count;
}

}  // namespace sluice::pipeline
