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
  BatchAcknowledger batch(2);  // two channels
  // Events 0-2 from a, 3-4 from b, 5 from a again.
  for (int i = 0; i < 3; ++i) batch.add(static_cast<size_t>(i), a, a->expect("a" + std::to_string(i) + "\n"));
  for (int i = 0; i < 2; ++i) batch.add(static_cast<size_t>(3 + i), b, b->expect("b" + std::to_string(i) + "\n"));
  batch.add(5, a, a->expect("a3\n"));
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
