#pragma once
// Waits for a condition rather than for a time: polls `condition` until it holds or `timeout`
// passes, and says which (tests then CHECK what they waited for).

#include <chrono>
#include <thread>

namespace sluice::test {

template <class Condition>
bool eventually(Condition&& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds every = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

}  // namespace sluice::test
