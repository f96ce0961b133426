#pragma once
// A source's interceptors as Flume configures them, under the source:
//   a1.sources.r1.interceptors = i1 i2
//   a1.sources.r1.interceptors.i1.type = timestamp        (an alias, any case, or Flume's Builder class)
//   a1.sources.r1.interceptors.i1.preserveExisting = true
// Each is made from its spec (kind interceptor, interceptors/); the keys are taken out of the
// source's properties, so the source's own table never sees them.

#include <memory>

#include "agent/api/config_tree.h"
#include "agent/api/interceptor.h"

namespace sluice {

// The source's chain, or null if it lists none. Throws ConfigError naming the file, line and key
// (a missing type, a type Sluice does not have, a property of an unlisted interceptor).
std::shared_ptr<const InterceptorChain> take_interceptors(config::ComponentConfig& source);

}  // namespace sluice
