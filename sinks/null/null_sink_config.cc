#include "sinks/null/null_sink_config.h"

namespace sluice {

const config::PropertyTable<NullSinkConfig> kNullSinkProperties{
    {"batchSize", &NullSinkConfig::batch_size, "0", "Max events per take; 0 = the channel's transactionCapacity.",
     {.min = 0, .max = 1'000'000}},
};

}  // namespace sluice
