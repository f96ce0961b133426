#pragma once
// Flume's channel selectors (`<source>.selector.type`): which of a source's channels each event
// goes into. Every event takes one of the selector's routes, fixed when it is configured:
//
//   replicating (the default)   one route: every channel, those in selector.optional optional
//   multiplexing                a route per selector.mapping/optional value, and the default one
//   load_balancing              a route per channel, taken in turn (or at random)
//
// A route's required channels are waited for as the source waits today (a full one pushes back
// on the senders); what RELP's answer waits for. Its optional channels take their copy only if
// they have room at that moment: a copy they cannot take is dropped and counted per channel,
// and nothing waits for their commits. An event a route sends nowhere (multiplexing without a
// selector.default, a value it does not map) is counted as unrouted.
//
// The route is chosen on the source's io thread, after the interceptors, for the last event of
// the batch being built (EventBatchBuilder::set_last_route); a sealed batch brings each route's
// events together (seal_routed) and its delivery puts each part where its route says.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "agent/api/event_batch.h"

namespace sluice {

// Indices into the source's channels (the order of its `channels` list).
struct ChannelRoute {
  std::vector<size_t> required;
  std::vector<size_t> optional;
};

class ChannelSelector {
 public:
  // At most this many routes (a route is a byte per event while a batch is built).
  static constexpr size_t kMaxRoutes = 256;

  explicit ChannelSelector(std::vector<ChannelRoute> routes) : routes_(std::move(routes)) {}
  virtual ~ChannelSelector() = default;

  const std::vector<ChannelRoute>& routes() const { return routes_; }
  // True when every event takes route 0: the source need not ask route() per event.
  bool single_route() const { return routes_.size() == 1; }
  // The route of the event `builder` appended last, its headers set. Called from several io
  // threads at once: const, with any state of its own per thread.
  virtual uint8_t route(const EventBatchBuilder& builder) const = 0;

 private:
  const std::vector<ChannelRoute> routes_;
};

// One route for every event (the replicating selector).
class SingleRouteSelector final : public ChannelSelector {
 public:
  explicit SingleRouteSelector(ChannelRoute route) : ChannelSelector({std::move(route)}) {}
  uint8_t route(const EventBatchBuilder&) const override { return 0; }
};

// Every one of `channels` channels, each required: a source's selector when it configures none.
inline std::shared_ptr<const ChannelSelector> every_channel(size_t channels) {
  ChannelRoute route;
  for (size_t i = 0; i < channels; ++i) route.required.push_back(i);
  return std::make_shared<SingleRouteSelector>(std::move(route));
}

}  // namespace sluice
