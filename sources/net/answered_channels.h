#pragma once
// What a source whose protocol answers once its events are held (RELP, Avro) needs of its
// channels, checked once for both: every route with optional channels has a required one (a copy
// an optional channel drops would be answered too), acknowledge-on-put only onto channels whose
// puts reach the disk, batchSize within each channel's, and at most 255 channels to wait for.

#include <string>
#include <vector>

#include "agent/api/channel.h"
#include "agent/api/channel_selector.h"
#include "agent/api/config_tree.h"

namespace sluice::net {

// `optional_only_why`: the refusal's explanation after the route's channels are named.
void check_answered_channels(const config::ComponentConfig& component, const std::vector<Channel*>& channels,
                             const ChannelSelector* selector, bool acknowledge_on_put, size_t batch_size,
                             const std::string& optional_only_why);

}  // namespace sluice::net
