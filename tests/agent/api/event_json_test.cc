#include <catch2/catch.hpp>

#include "agent/api/event_batch.h"
#include "agent/api/event_json.h"
#include "sources/syslog/charset.h"
#include "sources/syslog/syslog_parser.h"

using namespace sluice;
using namespace sluice::syslog;

TEST_CASE("json escapes control characters and writes ill-formed UTF-8 as U+FFFD", "[source][fidelity]") {
  EventBatchBuilder builder;
  // Overlong NUL, a surrogate, a truncated sequence, a quote, a backslash, a tab and a BEL.
  const std::string line = "<13>Nov 30 11:07:06 h a: \xC0\x80|\xED\xA0\x80|\xE2\x82|\"\\\t\x07|caf\xC3\xA9";
  EventRecord& e = builder.append(line);
  parse_syslog(line, ParseClock::at(0), e);
  const EventBatch batch = builder.seal();
  std::string json;
  append_event_json(batch, batch[0], json);
  CHECK(is_valid_utf8(json));
  CHECK_THAT(json, Catch::Contains(R"("message":"\uFFFD\uFFFD|)") ||
                       Catch::Contains("\"message\":\"\xEF\xBF\xBD\xEF\xBF\xBD|"));
  CHECK_THAT(json, Catch::EndsWith("|\\\"\\\\\\t\\u0007|caf\xC3\xA9\"}"));
}
