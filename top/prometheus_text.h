#pragma once
// The Prometheus text exposition format (what an agent's /metrics serves), read into samples:
// enough of it for `sluice top` — names, labels, values; comments, timestamps and lines that do
// not parse are skipped, never fatal (an agent of another version may add families).

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::top {

struct Sample {
  std::string name;  // e.g. sluice_pipeline_latency_seconds_bucket
  std::map<std::string, std::string> labels;
  double value = 0;

  const std::string& label(const std::string& key) const;  // "" if absent
};

std::vector<Sample> parse_prometheus_text(std::string_view text);

}  // namespace sluice::top
