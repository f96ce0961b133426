#pragma once
// Flume's sink groups (`<agent>.sinkgroups`, `processor.type`) on Sluice's sinks. Each sink of a
// group keeps its own thread and loop and its own transactions with its channel; before each
// take it asks its group whether it may take now, and it tells the group what became of each
// take it settled. A take that failed was rolled back into the channel, whole or in part, by the
// sink itself: nothing is lost by setting a sink aside, another member takes those events.
//
//   failover       only the live sink with the highest priority takes; one whose take fails is set
//                  aside for 2 s, 4 s, ... (at most processor.maxpenalty), then may try one take:
//                  delivered, it is live again (and active again if it is the preferred one)
//   load_balance   every live sink takes, as fast as it can; with processor.backoff a sink whose
//                  take fails is set aside likewise (at most processor.selector.maxTimeOut)
//   default        one sink, as if in no group

#include <cstddef>
#include <memory>
#include <string>

#include "agent/api/deadline.h"
#include "agent/api/metrics_writer.h"

namespace sluice {

class SinkGroup {
 public:
  virtual ~SinkGroup() = default;
  // Member `member` (its place in the group's sinks list) asks before a take.
  virtual bool may_take(size_t member, Clock::time_point now) = 0;
  // Member `member` settled a take: delivered (some of it committed as delivered, none rolled
  // back), or not (some of it rolled back for a failed delivery).
  virtual void settled(size_t member, bool delivered, Clock::time_point now) = 0;
  // Member `member` was let take and found its channel empty: it has nothing to settle.
  virtual void took_nothing(size_t /*member*/) {}
  // Member `member` does not run (it did not start at a reload): never chosen to take.
  virtual void leave(size_t member) = 0;
  // The group is replaced (a reload changed it): its members still running (draining a channel a
  // reload removed, or one kept with its previous settings) take as if in no group.
  virtual void dissolve() = 0;
  // sluice_sinkgroup_* families; any thread.
  virtual void write_metrics(MetricsWriter& writer) const = 0;
};

// What a sink holds of its group: nothing (it may always take), or its group and place in it.
class SinkGroupMember {
 public:
  SinkGroupMember() = default;
  SinkGroupMember(std::shared_ptr<SinkGroup> group, size_t index) : group_(std::move(group)), index_(index) {}
  bool may_take() const { return !group_ || group_->may_take(index_, Clock::now()); }
  void settled(bool delivered) const {
    if (group_) group_->settled(index_, delivered, Clock::now());
  }
  void took_nothing() const {
    if (group_) group_->took_nothing(index_);
  }
  explicit operator bool() const { return group_ != nullptr; }

 private:
  std::shared_ptr<SinkGroup> group_;
  size_t index_ = 0;
};

}  // namespace sluice
