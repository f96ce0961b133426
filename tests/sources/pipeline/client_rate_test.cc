// Per-client budgets (maxEventsPerSecondPerClient): what a second allows, the debt a read makes
// and how long it holds, UDP's admit, the clients counted as held, and the bound on the clients kept.

#include "sources/pipeline/client_rate.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <catch2/catch.hpp>

using namespace sluice::pipeline;
using namespace std::chrono_literals;

namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

sockaddr_storage ipv4(const char* text) {
  sockaddr_storage address{};
  auto& v4 = reinterpret_cast<sockaddr_in&>(address);
  v4.sin_family = AF_INET;
  inet_pton(AF_INET, text, &v4.sin_addr);
  return address;
}

sockaddr_storage ipv4_mapped(const char* mapped) {  // "::ffff:a.b.c.d"
  sockaddr_storage address{};
  auto& v6 = reinterpret_cast<sockaddr_in6&>(address);
  v6.sin6_family = AF_INET6;
  inet_pton(AF_INET6, mapped, &v6.sin6_addr);
  return address;
}

}  // namespace

TEST_CASE("a client's budget: a second's worth at once, then what a read overspent holds it that long", "[budget]") {
  ClientBudget budget({.events_per_second = 1000}, 0);
  CHECK(budget.charge(1000, 0, 0) == 0ms);  // the burst
  CHECK(budget.held(0));
  CHECK(budget.charge(500, 0, 0) == 500ms);  // in debt by half a second's worth
  CHECK(budget.held(kNanosPerSecond / 4));
  CHECK_FALSE(budget.held(kNanosPerSecond / 2 + kNanosPerSecond / 100));  // paid back (and a bit) half a second later
  // Over ten seconds at the limit nothing waits; faster, the waits add up to the excess.
  ClientBudget steady({.events_per_second = 1000}, 0);
  for (int64_t ms = 0; ms < 10'000; ms += 10) CHECK(steady.charge(10, 0, ms * 1'000'000) == 0ms);
}

TEST_CASE("a client's budget in bytes and events: the larger wait of the two", "[budget]") {
  ClientBudget budget({.events_per_second = 100, .bytes_per_second = 10'000}, 0);
  CHECK(budget.charge(50, 20'000, 0) == 1000ms);  // bytes: 10,000 over at 10,000/s
  ClientBudget events_bound({.events_per_second = 100, .bytes_per_second = 1'000'000}, 0);
  CHECK(events_bound.charge(300, 1000, 0) == 2000ms);
}

TEST_CASE("UDP: a datagram fits the budget or is refused, never taken on credit", "[budget]") {
  ClientBudget budget({.events_per_second = 10}, 0);
  int admitted = 0;
  for (int i = 0; i < 100; ++i) admitted += budget.admit(100, 0);
  CHECK(admitted == 10);
  CHECK(budget.held(0));
  CHECK(budget.admit(100, kNanosPerSecond / 10));  // a tenth of a second later: one more
  CHECK_FALSE(budget.admit(100, kNanosPerSecond / 10));
  ClientBudget bytes({.bytes_per_second = 1000}, 0);
  CHECK(bytes.admit(600, 0));
  CHECK_FALSE(bytes.admit(600, 0));  // 400 left: the whole datagram or nothing
}

TEST_CASE("budgets by client address: one per address whatever the port or dual-stack form, held ones counted",
          "[budget]") {
  ClientBudgets budgets({.events_per_second = 100});
  sockaddr_storage a = ipv4("127.0.0.2"), a_other_port = ipv4("127.0.0.2");
  reinterpret_cast<sockaddr_in&>(a_other_port).sin_port = htons(4242);
  const auto first = budgets.of(a, 0);
  CHECK(budgets.of(a_other_port, 0) == first);
  CHECK(budgets.of(ipv4_mapped("::ffff:127.0.0.2"), 0) == first);
  const auto other = budgets.of(ipv4("127.0.0.3"), 0);
  CHECK(other != first);
  CHECK(budgets.held(0) == 0);
  first->charge(150, 0, 0);
  CHECK(budgets.held(0) == 1);
  CHECK(budgets.held(kNanosPerSecond) == 0);
}

TEST_CASE("budgets: past the clients kept apart the new ones share one, and rested ones are forgotten", "[budget]") {
  ClientBudgets budgets({.events_per_second = 100});
  std::vector<std::shared_ptr<ClientBudget>> held;  // connections hold these: never forgotten
  sockaddr_storage address{};
  auto& v4 = reinterpret_cast<sockaddr_in&>(address);
  v4.sin_family = AF_INET;
  for (uint32_t i = 0; i < ClientBudgets::kTrackedClientsMax; ++i) {
    v4.sin_addr.s_addr = htonl(0x0a000000 + i);
    held.push_back(budgets.of(address, 0));
  }
  v4.sin_addr.s_addr = htonl(0x0b000001);
  const auto beyond = budgets.of(address, 0);
  v4.sin_addr.s_addr = htonl(0x0b000002);
  CHECK(budgets.of(address, 0) == beyond);  // shared by every client beyond the bound
  // Once let go and rested, they are forgotten: a new client has a budget of its own again.
  held.clear();
  v4.sin_addr.s_addr = htonl(0x0c000001);
  const auto later = budgets.of(address, 2 * kNanosPerSecond);
  CHECK(later != beyond);
  v4.sin_addr.s_addr = htonl(0x0c000002);
  CHECK(budgets.of(address, 2 * kNanosPerSecond) != later);
}
