#pragma once
// Flume's sink processors (agent/api/sink_group.h), each a spec of kind sink group: default,
// failover and load_balance.

#include "agent/api/component_spec.h"

namespace sluice::sink_processors {

extern const ComponentSpec kDefaultProcessorSpec;
extern const ComponentSpec kFailoverProcessorSpec;
extern const ComponentSpec kLoadBalanceProcessorSpec;

}  // namespace sluice::sink_processors
