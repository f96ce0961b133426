#pragma once
// Per-sender fairness: maxEventsPerSecondPerClient and maxBytesPerSecondPerClient. Each client
// address (the PROXY header's, behind a balancer) has a budget of events and bytes per second,
// with a second's worth to spend at once; a stream source charges what it read from a client's
// connections and stops reading them while the client is in debt (TCP pushes back on that sender
// alone: nothing is dropped), a UDP source drops and counts the datagrams beyond it. A client's
// connections share its budget across the source's io threads.

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "agent/api/property_table.h"

namespace sluice::pipeline {

struct ClientRateLimits {
  int64_t events_per_second = 0;  // 0: no limit
  int64_t bytes_per_second = 0;   // 0: no limit
  bool any() const { return events_per_second > 0 || bytes_per_second > 0; }
};

// One client's budget. Thread-safe: its connections may be read by several io threads.
class ClientBudget {
 public:
  ClientBudget(const ClientRateLimits& limits, int64_t now_ns);
  // Charges what was read; returns how long its reading should wait for the budget to be
  // back above nothing (zero: it may read on).
  std::chrono::milliseconds charge(uint64_t events, uint64_t bytes, int64_t now_ns);
  // UDP: a datagram of `bytes` fits the budget (charged), or not (not charged: dropped).
  bool admit(uint64_t bytes, int64_t now_ns);
  // In debt now: its reading waits (TCP), or its datagrams are dropped (UDP).
  bool held(int64_t now_ns) const;
  // Its budget is whole again: nothing would be lost by forgetting it.
  bool rested(int64_t now_ns) const;

 private:
  void refill(int64_t now_ns);

  const ClientRateLimits limits_;
  mutable std::mutex mutex_;
  double events_ = 0, bytes_ = 0;  // what is left to spend; negative: the debt
  int64_t last_ns_ = 0;
};

// The budgets of a source's clients, by address (without the port). A client's budget lives
// while a connection holds it, and after that until it has rested; at most kTrackedClientsMax
// are kept apart (past that, the clients not yet known share one budget: a flood of new
// addresses, as spoofed UDP makes, cannot grow this without end).
class ClientBudgets {
 public:
  static constexpr size_t kTrackedClientsMax = 65536;

  explicit ClientBudgets(ClientRateLimits limits) : limits_(limits) {}
  const ClientRateLimits& limits() const { return limits_; }
  std::shared_ptr<ClientBudget> of(const sockaddr_storage& client, int64_t now_ns);
  // Clients in debt now (the metric sluice_source_clients_held).
  uint64_t held(int64_t now_ns) const;

 private:
  void forget_rested(int64_t now_ns);

  const ClientRateLimits limits_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<ClientBudget>> budgets_;  // by the address's bytes
  std::shared_ptr<ClientBudget> shared_;                                    // the clients beyond kTrackedClientsMax
  size_t sweep_at_ = 1024;                                                  // forget_rested once there are this many
  int64_t swept_ns_ = 0;
};

int64_t monotonic_ns();

// The two rows, every network source's alike (C has max_events_per_client and
// max_bytes_per_client); `doc` says what the source does with a client over its budget.
template <class C>
config::Property<C> max_events_per_client_property(std::string_view doc) {
  return {"maxEventsPerSecondPerClient", &C::max_events_per_client, "0", doc, {.min = 0, .max = 1'000'000'000}, {}, {}};
}
template <class C>
config::Property<C> max_bytes_per_client_property() {
  return {"maxBytesPerSecondPerClient",
          &C::max_bytes_per_client,
          "0",
          "As maxEventsPerSecondPerClient, in bytes of messages (e.g. 10MB); both may be set. 0 = no limit.",
          {.min = 0, .max = 1LL << 40},
          {},
          {}};
}

}  // namespace sluice::pipeline
