// `sluice --print-metric-names`: the metric families' table (agent/api/metric_names.h), for
// scripts (bench/run.sh) that read the agent's /metrics without spelling the names again.

#include <iostream>

#include "agent/api/metric_names.h"
#include "agent/cli/commands.h"

namespace sluice::cli {

int print_metric_names() {
  using metric_names::Type;
  for (const metric_names::Family& f : metric_names::kFamilies)
    std::cout << f.constant << '\t' << f.name << '\t'
              << (f.type == Type::counter ? "counter"
                  : f.type == Type::gauge ? "gauge"
                                          : "histogram")
              << '\t' << f.help << '\n';
  return 0;
}

}  // namespace sluice::cli
