// Replies that wait for their events: a batch's acknowledger counts every channel's commit of
// every slice; the queue releases replies in ticket order; a queue outlives its connection.

#include <catch2/catch.hpp>

#include "sources/net/stream_acks.h"

using namespace sluice::net;

namespace {

std::string ready(AckQueue& q) {
  uint64_t events = 0;
  return q.take_ready(events);
}

}  // namespace

TEST_CASE("an event is done once every channel committed it, whatever the slices", "[ack]") {
  const auto waker = std::make_shared<AckWaker>(nullptr);
  const auto a = std::make_shared<AckQueue>(waker), b = std::make_shared<AckQueue>(waker);
  BatchAcknowledger batch;  // two channels
  // Events 0-2 from a, 3-4 from b, 5 from a again.
  for (int i = 0; i < 3; ++i) batch.add(static_cast<size_t>(i), a, a->expect("a" + std::to_string(i) + "\n"), 2);
  for (int i = 0; i < 2; ++i) batch.add(static_cast<size_t>(3 + i), b, b->expect("b" + std::to_string(i) + "\n"), 2);
  batch.add(5, a, a->expect("a3\n"), 2);
  batch.committed(0, 6);  // the first channel, whole
  CHECK(ready(*a).empty());
  CHECK(ready(*b).empty());
  batch.committed(2, 3);     // the second channel, in slices: [2, 5) first
  CHECK(ready(*a).empty());  // a's event 0 still waits
  CHECK(ready(*b) == "b0\nb1\n");
  batch.committed(0, 2);
  CHECK(ready(*a) == "a0\na1\na2\n");
  batch.committed(5, 1);
  uint64_t events = 0;
  CHECK(a->take_ready(events) == "a3\n");
  CHECK(events == 1);
  CHECK(a->waiting() == 0);
  batch.committed(0, 6);  // a third report changes nothing
  CHECK(ready(*a).empty());
}

TEST_CASE("events a selector routed apart: each waits for its own route's commits, by its new place", "[ack]") {
  const auto waker = std::make_shared<AckWaker>(nullptr);
  const auto a = std::make_shared<AckQueue>(waker), b = std::make_shared<AckQueue>(waker);
  BatchAcknowledger batch;
  // As added: a0 (route 1: two required channels), a1 (route 0: one), b0 (route 1), a2 (route 0).
  batch.add(0, a, a->expect("a0\n"), 2);
  batch.add(1, a, a->expect("a1\n"), 1);
  batch.add(2, b, b->expect("b0\n"), 2);
  batch.add(3, a, a->expect("a2\n"), 1);
  // Sealed into route order: route 0 = [a1, a2], route 1 = [a0, b0].
  batch.reorder({1, 3, 0, 2});
  batch.committed(0, 2);     // route 0's one channel
  CHECK(ready(*a).empty());  // a0 comes first and waits
  batch.committed(2, 2);     // route 1's first channel
  CHECK(ready(*a).empty());
  CHECK(ready(*b).empty());
  batch.committed(2, 2);  // and its second
  CHECK(ready(*a) == "a0\na1\na2\n");
  CHECK(ready(*b) == "b0\n");
}

TEST_CASE("replies leave in ticket order, those needing no event wait their turn", "[ack]") {
  const auto queue = std::make_shared<AckQueue>(std::make_shared<AckWaker>(nullptr));  // shared, as always
  AckQueue& q = *queue;
  const AckQueue::Ticket first = q.expect("1\n");
  q.reply_in_order("open-like\n");
  const AckQueue::Ticket third = q.expect("3\n");
  q.done(third, 1);
  CHECK(ready(q).empty());
  CHECK(q.waiting() == 3);
  q.done(first, 1);
  CHECK(ready(q) == "1\nopen-like\n3\n");
  CHECK(q.waiting() == 0);
}

TEST_CASE("a take says whether every reply is released with the replies it takes, never between the two", "[ack]") {
  // A session closes once its last reply is out: the worker learns that from the same take that
  // hands it the replies (a separate question could be answered before or after a commit).
  const auto q = std::make_shared<AckQueue>(std::make_shared<AckWaker>(nullptr));
  const AckQueue::Ticket first = q->expect("1 rsp 6 200 OK\n");
  q->reply_in_order("2 rsp 0\n");  // the close's answer, behind the event's
  uint64_t events = 0;
  bool all_released = true;
  CHECK(q->take_ready(events, &all_released).empty());
  CHECK_FALSE(all_released);
  q->done(first, 1);
  CHECK(q->take_ready(events, &all_released) == "1 rsp 6 200 OK\n2 rsp 0\n");
  CHECK(all_released);
  CHECK(events == 1);
}

TEST_CASE("a call whose events failed is answered with its failed reply, counted by its kind", "[ack]") {
  const auto waker = std::make_shared<AckWaker>(nullptr);
  const auto queue = std::make_shared<AckQueue>(waker);
  AckQueue& q = *queue;
  // Two calls of kind 2: three events, the answer on the last; then one event.
  const AckQueue::Ticket first = q.expect({});
  q.expect({});
  const AckQueue::Ticket last = q.expect("ok1\n", "failed1\n", 2);
  const AckQueue::Ticket single = q.expect("ok2\n", "failed2\n", 2);
  q.done(first, 1);
  q.failed(first + 1, 1);  // one event of the first call was not taken
  q.done(single, 1);
  CHECK(ready(q).empty());  // the first call's last event is not done yet
  q.done(last, 1);
  uint64_t events = 0;
  AckQueue::Released released;
  CHECK(q.take_ready(events, nullptr, &released) == "failed1\nok2\n");
  CHECK(events == 1);  // the second call's: the first call's events are not acknowledged, it failed
  CHECK(released.failed[1] == 1);
  CHECK(released.answered[1] == 1);
  CHECK(released.failed_events == 3);  // all of the failed call's: its sender sends them again
  q.failed(first, 4);                  // a late failure of tickets already released changes nothing
  CHECK(ready(q).empty());
}
