// Every default the reference documents (conf/REFERENCE.md, from the property tables) is the one
// the component uses: each component type, built once with only what it requires and once with
// every documented default given explicitly, must be the same component — the same memory bound
// (what it states it may hold: sizes, counts, capacities), or the same refusal (an interceptor or
// a channel selector: accepted both ways, under a source). A default
// applied in code past its table (RELP's eventSize once documented as TCP's 2500 while it used
// 128 KiB) fails here.

#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "agent/agent.h"
#include "agent/component_registry.h"
#include "agent/config/properties_file.h"
#include "tests/support/process.h"

using namespace sluice;

namespace {

// What each type needs to build at all.
const std::map<std::string, std::string, std::less<>> kRequired = {
    {"multiport_syslogtcp", "host = 127.0.0.1\nports = 5140\n"},
    {"syslogudp", "host = 127.0.0.1\nport = 5140\n"},
    {"relp", "host = 127.0.0.1\nport = 2514\n"},
    {"avro", "host = 127.0.0.1\nport = 4141\n"},
    {"memory", ""},
    {"spillablememory", "dataDir = /nonexistent/sluice-defaults-test\n"},
    {"file", "dataDir = /nonexistent/sluice-defaults-test\n"},
    {"kafka", "topic = t\nbrokerList = 127.0.0.1:9\n"},
    {"null", ""},
    {"timestamp", ""},
    {"host", ""},
    {"static", ""},
    {"uuid", ""},
    {"remove_header", ""},
    {"regex_filter", ""},
    {"search_replace", "searchPattern = x\n"},
    {"regex_extractor", "regex = (x)\nserializers = s\nserializers.s.name = found\n"},
    {"replicating", ""},
    {"multiplexing", ""},
    {"load_balancing", ""},
    {"default", ""},
    {"failover", ""},
    {"load_balance", ""},
};
// A type that is a sink as well as a source: what the sink needs.
const std::string kAvroSinkRequired = "hostname = 127.0.0.1\nport = 4141\n";

const std::string& required_of(config::Kind kind, std::string_view type) {
  if (kind == config::Kind::sink && type == "avro") return kAvroSinkRequired;
  return kRequired.find(type)->second;
}

// Rows whose documented default a component refuses when given explicitly, by design: TLS
// settings on a source without ssl = true (a TLS setting that would do nothing looks like
// security).
bool refused_when_given(const std::string& property) {
  return property.starts_with("ssl.") || property.starts_with("keystore") || property.starts_with("include-") ||
         property.starts_with("exclude-");
}

std::string prefixed(const std::string& prefix, const std::string& lines) {
  std::string out;
  size_t start = 0;
  while (start < lines.size()) {
    const size_t end = lines.find('\n', start);
    out += prefix + lines.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

// The component `spec` as the only one of its kind in an agent (with a memory channel and a null
// sink around it), with `properties` (lines "key = value").
std::string agent_with(const ComponentSpec& spec, const std::string& properties) {
  const std::string source = spec.kind == config::Kind::source ? std::string(spec.type) : "syslogudp";
  const std::string channel = spec.kind == config::Kind::channel ? std::string(spec.type) : "memory";
  // RELP and Avro answer once delivered: around them, a sink that waits for Kafka's acknowledgement.
  const bool answers = spec.kind == config::Kind::source && (spec.type == "relp" || spec.type == "avro");
  const std::string sink = spec.kind == config::Kind::sink ? std::string(spec.type) : answers ? "kafka" : "null";
  const auto own = [&](config::Kind kind, const std::string& type) {
    if (spec.kind == kind) return properties;
    return required_of(kind, type) + (answers && kind == config::Kind::sink ? "kafka.producer.acks = all\n" : "");
  };
  // An interceptor, under the source.
  const std::string interceptor =
      spec.kind == config::Kind::interceptor
          ? "a.sources.s.interceptors = i\n" +
                prefixed("a.sources.s.interceptors.i.", "type = " + std::string(spec.type) + "\n" + properties)
          : "";
  // A channel selector, likewise.
  const std::string selector =
      spec.kind == config::Kind::selector
          ? prefixed("a.sources.s.selector.", "type = " + std::string(spec.type) + "\n" + properties)
          : "";
  // A sink group, of the one sink.
  const std::string sink_group =
      spec.kind == config::Kind::sink_group
          ? "a.sinkgroups = g\na.sinkgroups.g.sinks = k\n" +
                prefixed("a.sinkgroups.g.processor.", "type = " + std::string(spec.type) + "\n" + properties)
          : "";
  return sink_group + "a.sources = s\na.channels = c\na.sinks = k\n" +
         prefixed("a.sources.s.", "type = " + source + "\n") +
         prefixed("a.sources.s.", own(config::Kind::source, source)) + interceptor + selector +
         "a.sources.s.channels = c\n" + prefixed("a.channels.c.", "type = " + channel + "\n") +
         prefixed("a.channels.c.", own(config::Kind::channel, channel)) +
         prefixed("a.sinks.k.", "type = " + sink + "\n") + prefixed("a.sinks.k.", own(config::Kind::sink, sink)) +
         "a.sinks.k.channel = c\n";
}

// The memory bound the agent states for `text`, or the refusal.
std::string built_agent(const std::string& text) {
  try {
    const Agent agent(config::assemble(config::parse_properties(text, "test.properties"), "a", "test.properties"));
    return agent.memory_bound().describe();
  } catch (const std::exception& e) {
    return std::string("refused: ") + e.what();
  }
}

}  // namespace

TEST_CASE("every documented default is what the component uses", "[config][defaults]") {
  for (const ComponentSpec* spec : all_components()) {
    INFO(spec->type);
    REQUIRE(kRequired.count(spec->type) == 1);  // a new type: say what it requires above
    const std::string required = required_of(spec->kind, spec->type);
    std::string explicit_defaults = required;
    for (const config::PropertyDoc& row : spec->describe()) {
      if (row.default_value.empty() || refused_when_given(row.name) ||
          required.find(row.name + " = ") != std::string::npos)
        continue;
      explicit_defaults += row.name + " = " + row.default_value + "\n";
    }
    const std::string implicit = built_agent(agent_with(*spec, required));
    INFO("given: " << explicit_defaults);
    INFO(implicit);
    CHECK_FALSE(implicit.starts_with("refused"));
    CHECK(built_agent(agent_with(*spec, explicit_defaults)) == implicit);
  }
}
