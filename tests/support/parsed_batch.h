#pragma once
// A batch of syslog lines as a source makes it: each line appended and parsed.

#include <string>
#include <vector>

#include "agent/api/event_batch.h"
#include "sources/syslog/syslog_parser.h"

namespace sluice::test {

inline EventBatch parsed_batch(const std::vector<std::string>& lines) {
  EventBatchBuilder builder;
  for (const std::string& line : lines) syslog::parse_syslog(line, syslog::ParseClock::now(), builder.append(line));
  return builder.seal();
}

}  // namespace sluice::test
