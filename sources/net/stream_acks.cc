#include "sources/net/stream_acks.h"

#include <algorithm>

namespace sluice::net {

void AckWaker::notify(std::shared_ptr<AckQueue> queue) {
  std::lock_guard lock(mutex_);
  if (!async_) return;
  ready_.push_back(std::move(queue));
  if (ready_.size() == 1) uv_async_send(async_);  // one wake-up serves all queued so far
}

std::vector<std::shared_ptr<AckQueue>> AckWaker::take_ready() {
  std::lock_guard lock(mutex_);
  return std::exchange(ready_, {});
}

void AckWaker::detach() {
  std::lock_guard lock(mutex_);
  async_ = nullptr;
  ready_.clear();
}

AckQueue::Ticket AckQueue::expect(std::string reply, std::string failed_reply, uint8_t kind) {
  std::lock_guard lock(mutex_);
  pending_.push_back({std::move(reply), std::move(failed_reply), false, true, false, kind});
  return head_ + pending_.size() - 1;
}

AckQueue::Ticket AckQueue::expect_run(size_t count, std::string reply, std::string failed_reply, uint8_t kind) {
  std::lock_guard lock(mutex_);
  const Ticket first = head_ + pending_.size();
  for (size_t i = 1; i < count; ++i) pending_.push_back({{}, {}, false, true, false, 0});
  pending_.push_back({std::move(reply), std::move(failed_reply), false, true, false, kind});
  return first;
}

void AckQueue::reply_in_order(std::string reply) {
  std::lock_guard lock(mutex_);
  pending_.push_back({std::move(reply), {}, true, false, false, 0});
  release_done_locked();  // the caller (the loop) sends what is ready after feeding
}

void AckQueue::done(Ticket first, size_t count) { mark_locked(first, count, false); }

void AckQueue::failed(Ticket first, size_t count) { mark_locked(first, count, true); }

void AckQueue::mark_locked(Ticket first, size_t count, bool failed) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    for (Ticket t = std::max(first, head_); t < first + count && t - head_ < pending_.size(); ++t) {
      Pending& p = pending_[t - head_];
      p.failed = p.failed || (failed && !p.done);  // a ticket already done stays as it was
      p.done = true;
    }
    release_done_locked();
    wake = !ready_.empty() && !notified_;
    if (wake) notified_ = true;
  }
  if (wake) waker_->notify(shared_from_this());
}

void AckQueue::release_done_locked() {
  while (!pending_.empty() && pending_.front().done) {
    const Pending& p = pending_.front();
    call_failed_ = call_failed_ || p.failed;
    call_events_ += p.event && !p.failed;
    call_failed_events_ += p.failed;
    if (!p.reply.empty()) {  // an answer, for itself and the tickets before it without one
      const bool failed = call_failed_ && !p.failed_reply.empty();
      ready_ += failed ? p.failed_reply : p.reply;
      if (p.kind) ++(failed ? released_.failed : released_.answered)[p.kind - 1];
      if (failed)
        released_.failed_events += call_events_ + call_failed_events_;  // all of the call's: sent again
      else
        ready_events_ += call_events_;  // acknowledged: answered as done
      call_events_ = call_failed_events_ = 0;
      call_failed_ = false;
    }
    pending_.pop_front();
    ++head_;
  }
}

std::string AckQueue::take_ready(uint64_t& events, bool* all_released, Released* released) {
  std::lock_guard lock(mutex_);
  notified_ = false;
  if (all_released) *all_released = pending_.empty();
  if (released) *released = std::exchange(released_, {});
  events = std::exchange(ready_events_, 0);
  return std::exchange(ready_, {});
}

size_t AckQueue::waiting() const {
  std::lock_guard lock(mutex_);
  return pending_.size();
}

void BatchAcknowledger::add(size_t index, const std::shared_ptr<AckQueue>& queue, AckQueue::Ticket ticket,
                            uint8_t commits) {
  // No lock, per event: until the batch is sealed and put, only its io thread knows it (the
  // channel's lock orders these writes before any commit reads them).
  if (remaining_.size() <= index) remaining_.resize(index + 1, 0);
  remaining_[index] = commits;
  if (!runs_.empty()) {
    Run& last = runs_.back();
    if (last.queue == queue && last.first_index + last.count == index && last.first_ticket + last.count == ticket) {
      ++last.count;
      return;
    }
  }
  runs_.push_back({index, 1, queue, ticket});
}

void BatchAcknowledger::reorder(const std::vector<uint32_t>& original_index) {
  // Each added event's run, by its original index; then the runs again, in the new order.
  struct Added {
    const Run* run = nullptr;
    AckQueue::Ticket ticket = 0;
  };
  std::vector<Added> added(remaining_.size());
  for (const Run& run : runs_)
    for (size_t k = 0; k < run.count; ++k) added[run.first_index + k] = {&run, run.first_ticket + k};
  std::vector<Run> runs;
  std::vector<uint8_t> remaining(original_index.size(), 0);
  for (size_t j = 0; j < original_index.size(); ++j) {
    const uint32_t i = original_index[j];
    if (i >= added.size() || !added[i].run) continue;  // an event that answers nothing
    remaining[j] = remaining_[i];
    const std::shared_ptr<AckQueue>& queue = added[i].run->queue;
    if (!runs.empty() && runs.back().queue == queue && runs.back().first_index + runs.back().count == j &&
        runs.back().first_ticket + runs.back().count == added[i].ticket)
      ++runs.back().count;
    else
      runs.push_back({j, 1, queue, added[i].ticket});
  }
  runs_ = std::move(runs);
  remaining_ = std::move(remaining);
}

void BatchAcknowledger::failed_all() {
  std::vector<Run> runs;
  {
    std::lock_guard lock(mutex_);
    std::fill(remaining_.begin(), remaining_.end(), 0);  // a commit that still comes answers nothing
    runs = runs_;
  }
  for (const Run& run : runs) run.queue->failed(run.first_ticket, run.count);
}

void BatchAcknowledger::committed(size_t first, size_t count) {
  // What is done is collected under this batch's lock, and told to the queues after it.
  struct Done {
    AckQueue* queue;
    AckQueue::Ticket first;
    size_t count;
  };
  std::vector<Done> done;
  std::vector<std::shared_ptr<AckQueue>> keep;  // alive until told
  {
    std::lock_guard lock(mutex_);
    const size_t end = std::min(first + count, remaining_.size());
    // The runs are in index order: the first one that reaches `first`.
    auto run = std::upper_bound(runs_.begin(), runs_.end(), first,
                                [](size_t index, const Run& r) { return index < r.first_index + r.count; });
    for (; run != runs_.end() && run->first_index < end; ++run) {
      const size_t from = std::max(first, run->first_index), to = std::min(end, run->first_index + run->count);
      for (size_t i = from; i < to; ++i) {
        if (remaining_[i] == 0 || --remaining_[i] != 0) continue;
        const AckQueue::Ticket ticket = run->first_ticket + (i - run->first_index);
        if (!done.empty() && done.back().queue == run->queue.get() && done.back().first + done.back().count == ticket)
          ++done.back().count;
        else {
          done.push_back({run->queue.get(), ticket, 1});
          keep.push_back(run->queue);
        }
      }
    }
  }
  for (const Done& d : done) d.queue->done(d.first, d.count);
}

}  // namespace sluice::net
