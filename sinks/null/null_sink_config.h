#pragma once
#include <cstddef>

#include "agent/api/property_table.h"

namespace sluice {

struct NullSinkConfig {
  size_t batch_size = 0;
};

extern const config::PropertyTable<NullSinkConfig> kNullSinkProperties;

}  // namespace sluice
