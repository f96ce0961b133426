#include "loadgen/acknowledged.h"

#include <algorithm>

namespace sluice::loadgen {

void declare_unanswered(ConnectionResult& result, uint64_t first, uint64_t count) {
  if (count == 0) return;
  result.possibly_lost += count;
  const uint64_t last = first + count - 1;
  if (!result.lost_ranges.empty() && result.lost_ranges.back().second + 1 == first)
    result.lost_ranges.back().second = last;
  else
    result.lost_ranges.emplace_back(first, last);
}

double percentile(std::vector<float>& latencies, double q) {
  if (latencies.empty()) return 0.0;
  const size_t k = std::min(latencies.size() - 1, static_cast<size_t>(q * static_cast<double>(latencies.size())));
  std::nth_element(latencies.begin(), latencies.begin() + static_cast<long>(k), latencies.end());
  return static_cast<double>(latencies[k]);
}

}  // namespace sluice::loadgen
