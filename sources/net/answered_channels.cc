#include "sources/net/answered_channels.h"

namespace sluice::net {

void check_answered_channels(const config::ComponentConfig& component, const std::vector<Channel*>& channels,
                             const ChannelSelector* selector, bool acknowledge_on_put, size_t batch_size,
                             const std::string& optional_only_why) {
  std::vector<bool> required(channels.size(), selector == nullptr);
  if (selector)
    for (const ChannelRoute& route : selector->routes()) {
      for (const size_t channel : route.required) required[channel] = true;
      if (!route.required.empty() || route.optional.empty()) continue;
      std::string names;
      for (const size_t channel : route.optional) names += (names.empty() ? "" : ", ") + channels[channel]->name();
      component.fail("selector", "routes some events to optional channels only (" + names + "): " + optional_only_why);
    }
  for (size_t i = 0; i < channels.size(); ++i) {
    batch_size_for(component, "batchSize", batch_size, *channels[i]);
    // An optional channel's puts are answered by nothing: it may keep them in memory.
    if (acknowledge_on_put && required[i] && !channels[i]->puts_reach_disk())
      component.fail("ackAfter", "= channel needs channels that write every put to disk, and channel '" +
                                     channels[i]->name() +
                                     "' keeps puts in memory: use a file channel, or ackAfter = kafka");
  }
  if (channels.size() > 255) component.fail("channels", "more than 255 channels cannot all be waited for");
}

}  // namespace sluice::net
