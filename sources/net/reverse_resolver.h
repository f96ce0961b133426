#pragma once
// Reverse DNS for clientHostnameHeader, on threads of the source's own. getnameinfo() blocks and
// cannot be cancelled once it runs: behind a dead resolver it takes the resolver's whole timeout
// (glibc: 5 s x 2 attempts per nameserver by default). On libuv's pool that held the io loop's
// end, and so the agent's stop, until every running lookup gave up. Here nobody waits for a
// running lookup: a stop cancels what is queued and lets the threads go (detached; each ends
// after its current call), and an answer for an io loop that has ended is dropped.
//
//   io thread ── lookup(inbox, id, address) ──▶ queue ──▶ resolver threads: getnameinfo
//      ▲                                                        │
//      └──── uv_async ◀── Inbox::post(answer) ◀─────────────────┘

#include <sys/socket.h>
#include <uv.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sluice::net {

class ReverseResolver {
 public:
  struct Answer {
    uint64_t id;
    std::string name;  // empty: no name (or cancelled)
  };
  // One per io thread: its answers, and the wake-up of its loop. detach() before the async
  // handle closes; answers after that are dropped.
  class Inbox {
   public:
    explicit Inbox(uv_async_t* async) : async_(async) {}
    void post(Answer answer);
    std::vector<Answer> take();
    void detach();

   private:
    std::mutex mutex_;
    uv_async_t* async_;
    std::vector<Answer> answers_;
  };

  explicit ReverseResolver(int threads);
  // Lets the threads go: queued lookups are dropped, running ones end on their own.
  ~ReverseResolver();
  ReverseResolver(const ReverseResolver&) = delete;
  ReverseResolver& operator=(const ReverseResolver&) = delete;

  // Queues a lookup of `address`; its answer (with `id`) goes to `inbox`.
  void lookup(const std::shared_ptr<Inbox>& inbox, uint64_t id, const sockaddr_storage& address);
  // Drops the lookups still queued for `inbox` (its loop is stopping); returns their ids.
  std::vector<uint64_t> cancel_queued(const Inbox* inbox);

 private:
  struct Request {
    std::shared_ptr<Inbox> inbox;
    uint64_t id;
    sockaddr_storage address;
  };
  // Shared with the threads, which may outlive the resolver.
  struct State {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Request> queue;
    bool stopping = false;
  };
  static void serve(std::shared_ptr<State> state);

  std::shared_ptr<State> state_;
};

}  // namespace sluice::net
