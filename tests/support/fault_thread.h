#pragma once
// A fault schedule run beside the load (stop a broker, wait, start it again). What it throws
// is kept and thrown again by join(), in the test's thread: an exception must fail the test,
// not std::terminate the program, which would leave the agent and the brokers without anyone
// to stop them.

#include <exception>
#include <functional>
#include <thread>

namespace sluice::test {

class FaultThread {
 public:
  explicit FaultThread(std::function<void()> schedule)
      : thread_([this, schedule = std::move(schedule)] {
          try {
            schedule();
          } catch (...) {
            error_ = std::current_exception();
          }
        }) {}
  ~FaultThread() {
    if (thread_.joinable()) thread_.join();
  }
  FaultThread(const FaultThread&) = delete;
  FaultThread& operator=(const FaultThread&) = delete;

  void join() {
    thread_.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::exception_ptr error_;
  std::thread thread_;  // last: started once error_ exists
};

}  // namespace sluice::test
