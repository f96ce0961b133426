#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "agent/config/config_file.h"
#include "agent/config/properties_file.h"
#include "tests/support/process.h"

using namespace sluice;
using namespace sluice::config;

namespace {

// Everything a component is, without where it was written.
std::string describe(const AgentConfig& c) {
  std::string out;
  for (const auto* group : {&c.sources, &c.channels, &c.sinks})
    for (const ComponentConfig& component : *group) {
      out += component.key_prefix + " type=" + component.type + " channels=";
      for (const std::string& ch : component.channels) out += ch + ",";
      for (const auto& [key, value] : component.properties) out += " " + key + "=" + value.value;
      out += "\n";
    }
  return out;
}

AgentConfig load_file(const std::string& path, const std::string& agent) {
  return assemble(load_config_file(path), agent, path);
}

}  // namespace

TEST_CASE("conf/agent.yaml and conf/agent.properties give the same model", "[config][yaml]") {
  const AgentConfig from_yaml = load_file(test::source_path("conf/agent.yaml"), "tier2");
  const AgentConfig from_properties = load_file(test::source_path("conf/agent.properties"), "tier2");
  CHECK(from_yaml.sinks.size() == 10);
  CHECK(describe(from_yaml) == describe(from_properties));
}

TEST_CASE("converting properties to YAML and back keeps the model", "[config][yaml]") {
  test::TempDir dir;
  const std::string seed = test::source_path("tests/data/seed.properties");
  std::ofstream(dir.file("seed.yaml")) << to_yaml(load_config_file(seed));
  std::ofstream(dir.file("back.properties")) << to_properties(load_config_file(dir.file("seed.yaml")));
  CHECK(describe(load_file(dir.file("seed.yaml"), "tier2")) == describe(load_file(seed, "tier2")));
  CHECK(describe(load_file(dir.file("back.properties"), "tier2")) == describe(load_file(seed, "tier2")));
}

TEST_CASE("YAML may nest property names and write lists as sequences", "[config][yaml]") {
  const FlatConfig flat = parse_yaml(
      "a:\n"
      "  sources:\n"
      "    s: {type: multiport_syslogtcp, channels: c, ports: [5140, 5141]}\n"
      "  channels:\n"
      "    c: {type: memory}\n"
      "  sinks:\n"
      "    k:\n"
      "      type: kafka\n"
      "      channel: c\n"
      "      kafka:\n"
      "        topic: t\n",
      "f.yaml");
  const AgentConfig c = assemble(flat, "a", "f.yaml");
  CHECK(c.sources[0].properties.at("ports").value == "5140 5141");
  CHECK(c.sinks[0].properties.at("kafka.topic").value == "t");
  CHECK(c.sinks[0].properties.at("kafka.topic").where.line == 11);
  CHECK_THROWS_WITH(parse_yaml("a:\n  sources: [unclosed\n", "bad.yaml"),
                    Catch::Contains("bad.yaml:") && Catch::Contains("not valid YAML"));
}

TEST_CASE("${VAR} is taken from the environment and an unset one is an error naming the key", "[config][env]") {
  ::setenv("SLUICE_TEST_BROKERS", "10.1.2.3:9092", 1);
  ::unsetenv("SLUICE_TEST_UNSET");
  FlatConfig flat = parse_properties(
      "a.sinks.k.brokerList = ${SLUICE_TEST_BROKERS},other:9092\n"
      "a.sinks.k.topic = ${SLUICE_TEST_UNSET:-fallback}\n",
      "f.properties");
  substitute_environment(flat);
  CHECK(flat[0].value == "10.1.2.3:9092,other:9092");
  CHECK(flat[1].value == "fallback");
  FlatConfig unset = parse_properties("a.x = 1\na.sinks.k.brokerList = ${SLUICE_TEST_UNSET}\n", "f.properties");
  CHECK_THROWS_WITH(
      substitute_environment(unset),
      Catch::Contains("f.properties:2: a.sinks.k.brokerList: environment variable SLUICE_TEST_UNSET is not set"));
  ::unsetenv("SLUICE_TEST_BROKERS");
}
