#include "sinks/null/null_sink_config.h"

namespace sluice {

// A table, one row per property, laid out for reading rather than by clang-format.
// clang-format off
const config::PropertyTable<NullSinkConfig> kNullSinkProperties{
    {"batchSize", &NullSinkConfig::batch_size, "0", "Max events per take; 0 = the channel's transactionCapacity.",
     {.min = 0, .max = 1'000'000}},
};
// clang-format on

}  // namespace sluice
