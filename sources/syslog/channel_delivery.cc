#include "sources/syslog/channel_delivery.h"

#include <spdlog/spdlog.h>

namespace sluice::syslog {

namespace {
constexpr auto kBlockedLogEvery = std::chrono::seconds(10);
}

ChannelDelivery::ChannelDelivery(std::string source_name, std::vector<Channel*> channels, std::string consequence,
                                 std::chrono::milliseconds slice, Waiting waiting)
    : source_name_(std::move(source_name)),
      channels_(std::move(channels)),
      consequence_(std::move(consequence)),
      slice_(slice),
      waiting_(std::move(waiting)) {}

bool ChannelDelivery::deliver(EventBatch batch) {
  bool everywhere = true;
  for (size_t i = 0; i < channels_.size(); ++i) {
    Channel& channel = *channels_[i];
    EventBatch copy = i + 1 < channels_.size() ? batch : std::move(batch);  // the events are shared
    const auto blocked_since = Clock::now();
    auto next_log = blocked_since + kBlockedLogEvery;
    while (true) {
      const Deadline deadline = waiting_.before_try();
      if (channel.put(copy, std::min(deadline, Clock::now() + slice_))) break;
      const auto now = Clock::now();
      if (now >= deadline) {
        waiting_.dropped(channel, copy.size());
        everywhere = false;
        break;
      }
      if (now >= next_log) {
        next_log = now + kBlockedLogEvery;
        spdlog::warn("source {}: channel {} has been full for {}s; {}", source_name_, channel.name(),
                     std::chrono::duration_cast<std::chrono::seconds>(now - blocked_since).count(), consequence_);
      }
    }
  }
  return everywhere;
}

}  // namespace sluice::syslog
