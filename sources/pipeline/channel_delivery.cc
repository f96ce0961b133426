#include "sources/pipeline/channel_delivery.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace sluice::pipeline {

namespace {
constexpr auto kBlockedLogEvery = std::chrono::seconds(10);
}

ChannelDelivery::ChannelDelivery(std::string source_name, std::vector<Channel*> channels,
                                 std::shared_ptr<const ChannelSelector> selector, RouteCounters& routes,
                                 std::string consequence, std::chrono::milliseconds slice, Waiting waiting)
    : source_name_(std::move(source_name)),
      channels_(std::move(channels)),
      selector_(std::move(selector)),
      routes_(routes),
      consequence_(std::move(consequence)),
      slice_(slice),
      waiting_(std::move(waiting)) {}

uint8_t ChannelDelivery::commits_expected(uint8_t route) const {
  return static_cast<uint8_t>(std::max<size_t>(1, selector_->routes()[route].required.size()));
}

bool ChannelDelivery::deliver(RoutedBatch routed) {
  gave_up_ = false;
  held_ = 0;
  const std::vector<ChannelRoute>& routes = selector_->routes();
  if (routes.size() == 1) return deliver_route(routes.front(), std::move(routed.parts.front()));
  bool everywhere = true;
  for (size_t r = 0; r < routes.size() && r < routed.parts.size(); ++r)
    if (!routed.parts[r].empty()) everywhere = deliver_route(routes[r], std::move(routed.parts[r])) && everywhere;
  return everywhere;
}

bool ChannelDelivery::deliver_route(const ChannelRoute& route, EventBatch part) {
  if (gave_up_) return false;  // the batch's senders are told "not now": none of it goes on
  bool everywhere = true, held = false;
  const size_t events = part.size();
  for (size_t i = 0; i < route.required.size() && !gave_up_; ++i) {
    const bool last = i + 1 == route.required.size() && route.optional.empty();
    const bool put = put_required(*channels_[route.required[i]], last ? std::move(part) : part);
    held = held || put;
    everywhere = put && everywhere;
  }
  if (held) held_ += events;
  if (gave_up_) return false;
  // An optional channel's copy answers nobody: its commit must not count as a required one's.
  for (const size_t channel : route.optional) {
    EventBatch copy = part.without_acknowledger();
    if (!channels_[channel]->put(copy, Clock::now()))
      routes_.optional_dropped(channel, part.size());
    else if (route.required.empty())
      held = true;  // in a channel: should the batch be refused later, it comes again
  }
  if (held && route.required.empty()) held_ += events;
  if (route.required.empty()) {
    if (route.optional.empty()) routes_.unrouted(part.size());
    part.report_commit();  // what waits for its required channels waits for none (commits_expected)
  }
  return everywhere;
}

bool ChannelDelivery::put_required(Channel& channel, EventBatch part) {
  const auto blocked_since = Clock::now();
  auto next_log = blocked_since + kBlockedLogEvery;
  const auto give_up_at = waiting_.give_up_after.count() > 0 ? blocked_since + waiting_.give_up_after : Deadline::max();
  while (true) {
    const Deadline deadline = waiting_.before_try();
    if (channel.put(part, std::min({deadline, give_up_at, Clock::now() + slice_}))) return true;
    const auto now = Clock::now();
    if (now >= deadline) {
      waiting_.dropped(channel, part.size());
      return false;
    }
    if (now >= give_up_at) {
      gave_up_ = true;
      waiting_.gave_up(channel);
      return false;
    }
    if (now >= next_log) {
      next_log = now + kBlockedLogEvery;
      spdlog::warn("source {}: channel {} has been full for {}s; {}", source_name_, channel.name(),
                   std::chrono::duration_cast<std::chrono::seconds>(now - blocked_since).count(), consequence_);
    }
  }
}

}  // namespace sluice::pipeline
