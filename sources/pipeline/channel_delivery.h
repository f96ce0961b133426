#pragma once
// The one place where a source's finished batch passes into its channels (TCP, TLS, RELP
// and UDP alike), as its channel selector routed each event (channel_selector.h). Each route's
// events go into its required channels in turn, waiting for room as long as it takes — that wait
// is the backpressure — or until the source's stop deadline, when what is left is dropped,
// counted and logged by the source; then into its optional channels, each only if it has room at
// that moment (a copy it cannot take is dropped and counted per channel). Before each try (slices
// of the wait) the source serves what it must while it waits (letting go of its ports for a
// reload, counting the kernel's drops), and a line every 10 s says which channel is full and
// what the senders feel of it.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/api/channel.h"
#include "agent/api/channel_selector.h"
#include "sources/pipeline/source_counters.h"

namespace sluice::pipeline {

class ChannelDelivery {
 public:
  struct Waiting {
    // Before each try (at most `slice` apart while a channel is full): serves what the source
    // must while it waits, and returns the stop's deadline (Deadline::max() while it runs).
    std::function<Deadline()> before_try;
    // A required channel still full at the deadline: `events` of the batch never went into it.
    std::function<void(const Channel& channel, size_t events)> dropped;
    // For a source that can tell its senders "not now" (Avro's FAILED): how long a required
    // channel may stay full before the batch's put is given up (0: as long as it takes).
    std::chrono::milliseconds give_up_after{0};
    // It was, for `channel` (once per batch: the batch's other puts are not tried).
    std::function<void(const Channel& channel)> gave_up;
  };

  // `consequence` ends the blocked line: what the senders feel ("TCP backpressure on the senders").
  // `routes` counts what the selector leaves undone (shared by the source's deliveries).
  ChannelDelivery(std::string source_name, std::vector<Channel*> channels,
                  std::shared_ptr<const ChannelSelector> selector, RouteCounters& routes, std::string consequence,
                  std::chrono::milliseconds slice, Waiting waiting);

  const std::shared_ptr<const ChannelSelector>& selector() const { return selector_; }
  // The routes a batch is sealed into: EventBatchBuilder::seal_routed(routes()).
  size_t routes() const { return selector_->routes().size(); }
  // Into the channels each route names; true if every required channel took its part (false:
  // dropped at the deadline from some).
  bool deliver(RoutedBatch routed);
  // After deliver(): whether it gave up on a full channel (give_up_after), and how many of the
  // batch's events a required channel had taken before (their senders, told "not now", send them
  // again: they may be stored twice).
  bool gave_up() const { return gave_up_; }
  size_t held_before_give_up() const { return gave_up_ ? held_ : 0; }
  // How many channel commits an event of `route` is answered after (RELP, ackAfter = kafka): one
  // per required channel. An event with none is answered once its delivery is done (deliver()
  // reports it committed once then).
  uint8_t commits_expected(uint8_t route) const;

 private:
  bool deliver_route(const ChannelRoute& route, EventBatch part);
  // Into a required channel, waiting for room; false: dropped at the deadline, or given up.
  bool put_required(Channel& channel, EventBatch part);

  const std::string source_name_;
  const std::vector<Channel*> channels_;
  const std::shared_ptr<const ChannelSelector> selector_;
  RouteCounters& routes_;
  const std::string consequence_;
  const std::chrono::milliseconds slice_;
  const Waiting waiting_;
  bool gave_up_ = false;  // in the batch being delivered: the rest of it is not tried
  size_t held_ = 0;       // events of it a required channel took
};

}  // namespace sluice::pipeline
