#pragma once
// Flume's channel selectors (agent/api/channel_selector.h), each a spec of kind selector,
// configured under a source (`<source>.selector.type`, `<source>.selector.*`).

#include "agent/api/component_spec.h"

namespace sluice::selectors {

extern const ComponentSpec kReplicatingSelectorSpec;
extern const ComponentSpec kMultiplexingSelectorSpec;
extern const ComponentSpec kLoadBalancingSelectorSpec;

}  // namespace sluice::selectors
