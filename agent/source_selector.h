#pragma once
// A source's channel selector as Flume configures it, under the source:
//   a1.sources.r1.selector.type = multiplexing     (an alias, any case, or Flume's class name)
//   a1.sources.r1.selector.header = Severity
//   a1.sources.r1.selector.mapping.3 = c1 c2
// Made from its spec (kind selector, selectors/); the keys are taken out of the source's
// properties, so the source's own table never sees them.

#include <memory>

#include "agent/api/channel_selector.h"
#include "agent/api/config_tree.h"

namespace sluice {

// The source's selector: replicating into every channel when it configures none. Throws
// ConfigError naming the file, line and key (a type Sluice does not have, a channel the source
// does not list, a property the selector does not have).
std::shared_ptr<const ChannelSelector> take_selector(config::ComponentConfig& source);

}  // namespace sluice
