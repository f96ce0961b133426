#pragma once
// Replies that wait for their events (RELP's "rsp 200 OK"): who waits, and who tells.
//
//   io thread                          channel commit (a sink thread)
//   AckQueue::expect(reply) ─ ticket ─▶ BatchAcknowledger (on the batch's storage)
//                                        │ each event committed by every channel
//   send ◀── AckWaker (uv_async) ◀────── AckQueue::done(tickets)
//
// An AckQueue belongs to one connection and may outlive it (a batch still in a channel holds
// it): replies for a closed connection are simply never sent; the sender resends those events.
// Replies leave in ticket order, whatever order their events are committed in.

#include <uv.h>

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/api/event_batch.h"

namespace sluice::net {

class AckQueue;

// One per io thread: wakes its loop when a queue has replies ready.
class AckWaker {
 public:
  // `async` is the loop's handle; detach() before it closes.
  explicit AckWaker(uv_async_t* async) : async_(async) {}
  void notify(std::shared_ptr<AckQueue> queue);
  // Loop thread: the queues that have replies ready since the last call.
  std::vector<std::shared_ptr<AckQueue>> take_ready();
  // The loop is ending: later notifications are dropped.
  void detach();

 private:
  std::mutex mutex_;
  uv_async_t* async_;
  std::vector<std::shared_ptr<AckQueue>> ready_;
};

class AckQueue : public std::enable_shared_from_this<AckQueue> {
 public:
  using Ticket = uint64_t;
  explicit AckQueue(std::shared_ptr<AckWaker> waker) : waker_(std::move(waker)) {}

  // What released replies answered (take_ready): for counters a protocol names by kind (Avro:
  // 1 = append, 2 = appendBatch), and the events of failed ones.
  struct Released {
    std::array<uint64_t, 2> answered{};  // by kind - 1: answers sent as given
    std::array<uint64_t, 2> failed{};    // by kind - 1: answers sent as failed (failed())
    uint64_t failed_events = 0;          // of the calls answered failed, all (their senders send them again)
  };

  // Loop thread: `reply` goes out once done(ticket) and every earlier reply has gone. A reply
  // may answer the tickets before it with no reply of their own (a call of many events): if any of
  // them failed(), `failed_reply` goes out in its place. `kind` (0: none) counts it in Released.
  Ticket expect(std::string reply, std::string failed_reply = {}, uint8_t kind = 0);
  // `count` tickets at once (one lock), the last with `reply`: a call of `count` events. Returns
  // the first; the others follow it.
  Ticket expect_run(size_t count, std::string reply, std::string failed_reply = {}, uint8_t kind = 0);
  // Loop thread: `reply` goes out right after the earlier ones (needs no event).
  void reply_in_order(std::string reply);
  // Any thread: these tickets' events are done.
  void done(Ticket first, size_t count);
  // Any thread: these tickets' events were not taken (a channel stayed full): done, and the reply
  // that answers them is its failed one.
  void failed(Ticket first, size_t count);
  // Loop thread: the replies whose turn has come, in order (empty if none); `events` counts
  // those that answered an event (expect()); `all_released`, if given, whether none still waits
  // (read under the same lock: a commit on another thread cannot fall between the two).
  std::string take_ready(uint64_t& events, bool* all_released = nullptr, Released* released = nullptr);
  // Replies still waiting for their events.
  size_t waiting() const;

  // The io worker's connection, set and cleared on its loop thread only.
  void* connection = nullptr;

 private:
  struct Pending {
    std::string reply;
    std::string failed_reply;
    bool done = false;
    bool event = false;  // from expect()
    bool failed = false;
    uint8_t kind = 0;
  };
  void release_done_locked();
  void mark_locked(Ticket first, size_t count, bool failed);

  const std::shared_ptr<AckWaker> waker_;
  mutable std::mutex mutex_;
  std::deque<Pending> pending_;  // tickets [head_, head_ + pending_.size())
  Ticket head_ = 0;
  std::string ready_;
  uint64_t ready_events_ = 0;
  Released released_;
  bool call_failed_ = false;         // a ticket since the last reply failed
  uint64_t call_events_ = 0;         // events done since the last reply: acknowledged with the next one
  uint64_t call_failed_events_ = 0;  // events failed since the last reply
  bool notified_ = false;            // in the waker's ready list since the last take_ready
};

// On a batch's storage (EventStorage::acknowledger): which connection and ticket each event
// answers, and how many channel commits it still waits for (its route's required channels).
class BatchAcknowledger final : public CommitTracker {
 public:
  // Loop thread, while the batch is built: event `index` answers `ticket` of `queue` after
  // `commits` channel commits (at least 1).
  void add(size_t index, const std::shared_ptr<AckQueue>& queue, AckQueue::Ticket ticket, uint8_t commits);
  // Any thread: the batch was not put into every required channel (one stayed full): each event's
  // ticket failed (AckQueue::failed), so that its sender is told at once.
  void failed_all();
  // Loop thread, before the batch is put: its events were brought into route order
  // (RoutedBatch::original_index): event j is the one added as original_index[j].
  void reorder(const std::vector<uint32_t>& original_index);
  // Any thread (a channel's commit, or every put done): events [first, first + count).
  void committed(size_t first, size_t count) override;
  size_t size() const { return remaining_.size(); }

 private:
  // Consecutive events of one connection with consecutive tickets.
  struct Run {
    size_t first_index;
    size_t count;
    std::shared_ptr<AckQueue> queue;
    AckQueue::Ticket first_ticket;
  };
  std::mutex mutex_;
  std::vector<Run> runs_;
  std::vector<uint8_t> remaining_;  // per event: channel commits still to come
};

}  // namespace sluice::net
