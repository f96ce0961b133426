#pragma once
// The agent's metrics, folded from the components' own per-batch counters at scrape time:
// nothing here runs per event. Two renderings: Prometheus text and Flume's JSON
// (`SOURCE.r1` → `EventReceivedCount`, ...), so that Flume dashboards keep working.

#include <string>

namespace sluice {

class Agent;

std::string prometheus_text(const Agent& agent);
std::string flume_json(const Agent& agent);

}  // namespace sluice
