// Flume's config filters: ${f['KEY']} from the environment or a command's output, in every value
// of the agent; what cannot be resolved refuses the file naming the line and why.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "agent/config/config_file.h"
#include "agent/config/config_filters.h"
#include "agent/config/properties_file.h"
#include "tests/support/process.h"

using namespace sluice;
using namespace sluice::config;
using Catch::Contains;

namespace {

std::string flat_value(const FlatConfig& flat, const std::string& key) {
  for (const FlatEntry& e : flat)
    if (e.key == key) return e.value;
  return "<absent>";
}

FlatConfig filtered(const std::string& text) {
  FlatConfig flat = parse_properties(text, "agent.properties");
  apply_config_filters(flat);
  return flat;
}

std::string filters_refusal(const std::string& text) {
  try {
    filtered(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("env and external filters fill ${f['KEY']} in every value, in Flume's three spellings", "[config][filters]") {
  test::TempDir dir;
  std::ofstream(dir.file("secret.sh")) << "echo \"secret-$1\"\necho second line\n";
  ::setenv("SLUICE_FILTER_TEST", "from-env", 1);
  const FlatConfig flat = filtered(
      "a1.configfilters = e x\n"
      "a1.configfilters.e.type = env\n"
      "a1.configfilters.x.type = org.apache.flume.configfilter.ExternalProcessConfigFilter\n"
      "a1.configfilters.x.command = /bin/sh " +
      dir.file("secret.sh") +
      "\n"
      "a1.configfilters.x.timeout = 5s\n"
      "a1.sinks.k.kafka.producer.sasl.password = ${x['kafka_pw']}\n"
      "a1.sinks.k.kafka.topic = pre-${e[SLUICE_FILTER_TEST]}-${e[\"SLUICE_FILTER_TEST\"]}-post\n"
      "a1.sources.r.interceptors.i1.value = ${e['SLUICE_FILTER_TEST']}\n"
      "a2.sinks.k.topic = ${e['SLUICE_FILTER_TEST']}x\n");
  CHECK(flat_value(flat, "a1.sinks.k.kafka.producer.sasl.password") == "secret-kafka_pw");
  CHECK(flat_value(flat, "a1.sinks.k.kafka.topic") == "pre-from-env-from-env-post");
  CHECK(flat_value(flat, "a1.sources.r.interceptors.i1.value") == "from-env");
  CHECK(flat_value(flat, "a1.configfilters") == "<absent>");  // applied, then gone
  CHECK(flat_value(flat, "a1.configfilters.x.command") == "<absent>");
  CHECK(flat_value(flat, "a2.sinks.k.topic") == "${e['SLUICE_FILTER_TEST']}x");  // another agent's filters
}

TEST_CASE("what a filter cannot resolve refuses the file naming the line and why", "[config][filters]") {
  test::TempDir dir;
  std::ofstream(dir.file("fails.sh")) << "echo 'vault sealed' >&2\nexit 3\n";
  std::ofstream(dir.file("hangs.sh")) << "exec sleep 60\n";
  ::unsetenv("SLUICE_FILTER_UNSET");
  const std::string env = "a1.configfilters = e\na1.configfilters.e.type = env\n";
  CHECK_THAT(filters_refusal(env + "a1.sinks.k.topic = ${e['SLUICE_FILTER_UNSET']}\n"),
             Contains("agent.properties:3: a1.sinks.k.topic: ${e['SLUICE_FILTER_UNSET']}: environment variable "
                      "SLUICE_FILTER_UNSET is not set"));
  CHECK_THAT(filters_refusal(env + "a1.sinks.k.topic = ${e['a.b']}\n"), Contains("is not a config filter reference"));
  const std::string external = "a1.configfilters = x\na1.configfilters.x.type = external\n";
  CHECK_THAT(filters_refusal(external + "a1.configfilters.x.command = /bin/sh " + dir.file("fails.sh") +
                             "\na1.sinks.k.topic = ${x['k']}\n"),
             Contains("exited with status 3: vault sealed"));
  CHECK_THAT(filters_refusal(external + "a1.configfilters.x.command = /bin/sh " + dir.file("hangs.sh") +
                             "\na1.configfilters.x.timeout = 200ms\na1.sinks.k.topic = ${x['k']}\n"),
             Contains("did not finish within 200 ms (timeout); it was killed"));
  CHECK_THAT(
      filters_refusal(external + "a1.configfilters.x.command = /nonexistent/secret\na1.sinks.k.topic = ${x['k']}\n"),
      Contains("x['k']"));
  CHECK_THAT(filters_refusal(external + "a1.sinks.k.topic = x\n"), Contains("a1.configfilters.x.command is missing"));
  CHECK_THAT(filters_refusal("a1.configfilters = h\na1.configfilters.h.type = hadoop\n"),
             Contains("Hadoop's credential store and custom classes are not supported"));
  CHECK_THAT(filters_refusal(env + "a1.configfilters.other.type = env\n"), Contains("a filter not listed"));
}

TEST_CASE("a reference to a filter the agent does not have is refused when the file is loaded", "[config][filters]") {
  test::TempDir dir;
  std::ofstream(dir.file("a.properties")) << "a1.sources = r\na1.sinks.k.topic = ${nope['KEY']}\n";
  CHECK_THROWS_WITH(assemble(load_config_file(dir.file("a.properties")), "a1", dir.file("a.properties")),
                    Contains("a.properties:2: a1.sinks.k.topic: nope is not a config filter of this agent"));
}

TEST_CASE("a value a filter brings is not read again for ${...}", "[config][filters]") {
  test::TempDir dir;
  ::setenv("SLUICE_FILTER_SECRET", "pa${x}ss", 1);
  ::unsetenv("x");
  std::ofstream(dir.file("a.properties")) << "a1.configfilters = e\na1.configfilters.e.type = env\n"
                                             "a1.sinks.k.kafka.producer.sasl.password = ${e['SLUICE_FILTER_SECRET']}\n";
  const FlatConfig flat = load_config_file(dir.file("a.properties"));
  CHECK(flat_value(flat, "a1.sinks.k.kafka.producer.sasl.password") == "pa${x}ss");
}

TEST_CASE("a config filter key starting with '-' is refused: the command would take it for an option",
          "[config][filters]") {
  CHECK_THAT(
      filters_refusal("a1.configfilters = x\n"
                      "a1.configfilters.x.type = external\n"
                      "a1.configfilters.x.command = /bin/echo\n"
                      "a1.sinks.k.kafka.producer.sasl.password = ${x['-n']}\n"),
      Contains("agent.properties:4: a1.sinks.k.kafka.producer.sasl.password") && Contains("may not start with '-'"));
}

TEST_CASE("config convert's reading of a file runs no filter and keeps the references and the filters",
          "[config][filters]") {
  test::TempDir dir;
  // The command would leave a mark if it ran.
  std::ofstream(dir.file("secret.sh")) << "touch " << dir.file("ran") << "\necho \"secret-$1\"\n";
  const std::string text =
      "a1.configfilters = x\n"
      "a1.configfilters.x.type = external\n"
      "a1.configfilters.x.command = /bin/sh " +
      dir.file("secret.sh") +
      "\n"
      "a1.sinks.k.kafka.producer.sasl.password = ${x['kafka_password']}\n"
      "a1.sinks.k.brokerList = ${KAFKA_BROKERS:-127.0.0.1:9092}\n";
  std::ofstream(dir.file("agent.properties")) << text;
  const FlatConfig written = load_config_file_as_written(dir.file("agent.properties"));
  CHECK(flat_value(written, "a1.sinks.k.kafka.producer.sasl.password") == "${x['kafka_password']}");
  CHECK(flat_value(written, "a1.sinks.k.brokerList") == "${KAFKA_BROKERS:-127.0.0.1:9092}");
  CHECK(flat_value(written, "a1.configfilters.x.type") == "external");
  CHECK_FALSE(std::ifstream(dir.file("ran")).good());
  // Through YAML and back: every key with its value (YAML's maps add the component lists).
  std::ofstream(dir.file("agent.yaml")) << to_yaml(written);
  const FlatConfig back = load_config_file_as_written(dir.file("agent.yaml"));
  for (const FlatEntry& e : written) CHECK(flat_value(back, e.key) == e.value);
  CHECK_FALSE(std::ifstream(dir.file("ran")).good());
  // The agent's own load runs it (and what convert printed holds no secret).
  CHECK(flat_value(load_config_file(dir.file("agent.properties")), "a1.sinks.k.kafka.producer.sasl.password") ==
        "secret-kafka_password");
  CHECK(std::ifstream(dir.file("ran")).good());
}

TEST_CASE("sink groups and config filters go to YAML and back as the other component lists do", "[config][yaml]") {
  test::TempDir dir;
  const std::string text =
      "a1.sinks = k1 k2\n"
      "a1.sinkgroups = g\n"
      "a1.sinkgroups.g.sinks = k1 k2\n"
      "a1.sinkgroups.g.processor.type = failover\n"
      "a1.configfilters = e\n"
      "a1.configfilters.e.type = env\n";
  std::ofstream(dir.file("agent.properties")) << text;
  const FlatConfig written = load_config_file_as_written(dir.file("agent.properties"));
  std::ofstream(dir.file("agent.yaml")) << to_yaml(written);
  const FlatConfig back = load_config_file_as_written(dir.file("agent.yaml"));
  CHECK(flat_value(back, "a1.sinkgroups") == "g");
  CHECK(flat_value(back, "a1.sinkgroups.g.sinks") == "k1 k2");
  CHECK(flat_value(back, "a1.configfilters") == "e");
  CHECK(flat_value(back, "a1.configfilters.e.type") == "env");
}
