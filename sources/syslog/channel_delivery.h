#pragma once
// The one place where a syslog source's finished batch passes into its channels (TCP, TLS, RELP
// and UDP alike): every channel in turn, waiting for room as long as it takes — that wait is the
// backpressure — or until the source's stop deadline, when what is left is dropped, counted and
// logged by the source. Before each try (slices of the wait) the source serves what it must
// while it waits (letting go of its ports for a reload, counting the kernel's drops), and a line
// every 10 s says which channel is full and what the senders feel of it.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "agent/api/channel.h"

namespace sluice::syslog {

class ChannelDelivery {
 public:
  struct Waiting {
    // Before each try (at most `slice` apart while a channel is full): serves what the source
    // must while it waits, and returns the stop's deadline (Deadline::max() while it runs).
    std::function<Deadline()> before_try;
    // A channel still full at the deadline: `events` of the batch never went into it.
    std::function<void(const Channel& channel, size_t events)> dropped;
  };

  // `consequence` ends the blocked line: what the senders feel ("TCP backpressure on the senders").
  ChannelDelivery(std::string source_name, std::vector<Channel*> channels, std::string consequence,
                  std::chrono::milliseconds slice, Waiting waiting);

  // Into every channel; true if every one took it (false: dropped at the deadline from some).
  bool deliver(EventBatch batch);

  const std::vector<Channel*>& channels() const { return channels_; }

 private:
  const std::string source_name_;
  const std::vector<Channel*> channels_;
  const std::string consequence_;
  const std::chrono::milliseconds slice_;
  const Waiting waiting_;
};

}  // namespace sluice::syslog
