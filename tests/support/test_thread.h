#pragma once
// Work a test runs beside its main thread (a fault schedule, a sender, a stop). What it throws
// is kept and thrown again by join(), in the test's thread: an exception must fail the test,
// not std::terminate the program, which would leave the agent and the brokers without anyone
// to stop them. And a REQUIRE that fails on the main thread meanwhile unwinds through the
// destructor, which joins (the work must be bounded in time), instead of destroying a joinable
// std::thread. The work itself asserts nothing: Catch2 v2 is not thread-safe.

#include <exception>
#include <functional>
#include <thread>

namespace sluice::test {

class TestThread {
 public:
  explicit TestThread(std::function<void()> schedule)
      : thread_([this, schedule = std::move(schedule)] {
          try {
            schedule();
          } catch (...) {
            error_ = std::current_exception();
          }
        }) {}
  ~TestThread() {
    if (thread_.joinable()) thread_.join();
  }
  TestThread(const TestThread&) = delete;
  TestThread& operator=(const TestThread&) = delete;

  void join() {
    thread_.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::exception_ptr error_;
  std::thread thread_;  // last: started once error_ exists
};

}  // namespace sluice::test
