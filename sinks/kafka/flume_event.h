#pragma once
// Flume's event as its Kafka sink writes it with useFlumeEventFormat = true, and its Kafka source
// and Kafka channel read it with parseAsFlumeEvent = true: the Avro record
//   record AvroFlumeEvent { map<string> headers; bytes body; }     (flume-ng-sdk's flume.avdl)
// in Avro's binary encoding, without a container or schema fingerprint.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::kafka {

using FlumeHeaders = std::vector<std::pair<std::string, std::string>>;

void append_flume_event(const FlumeHeaders& headers, std::string_view body, std::string& out);

struct FlumeEvent {
  FlumeHeaders headers;
  std::string body;
};
// The event `bytes` hold, or nullopt if they are not one (for verifiers and tests).
std::optional<FlumeEvent> parse_flume_event(std::string_view bytes);

}  // namespace sluice::kafka
