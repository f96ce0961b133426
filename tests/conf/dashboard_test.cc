// conf/grafana-dashboard.json: valid JSON whose every query names metric families a running
// agent exports (its /metrics), so that a renamed metric cannot leave a panel silently empty; and
// that agent, running a component of every kind, exports exactly the families the one list of
// names (agent/api/metric_names.h, which the probes and `sluice top` use) promises.

#include <signal.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "agent/api/metric_names.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/test_certificates.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

// Every "expr" in the dashboard (JSON is YAML's flow style: yaml-cpp reads it).
void collect_exprs(const YAML::Node& node, std::vector<std::string>& out) {
  if (node.IsMap()) {
    for (const auto& entry : node) {
      if (entry.first.as<std::string>() == "expr") out.push_back(entry.second.as<std::string>());
      collect_exprs(entry.second, out);
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) collect_exprs(item, out);
  }
}

// The families of a Prometheus text exposition (its "# TYPE name kind" lines), with a
// histogram's series names (_bucket, _sum, _count).
std::set<std::string> families(const std::string& text) {
  std::set<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string hash, type, name, kind;
    if (!(words >> hash >> type >> name >> kind) || hash != "#" || type != "TYPE") continue;
    names.insert(name);
    if (kind == "histogram")
      for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(name + suffix);
  }
  return names;
}

}  // namespace

TEST_CASE(
    "every query of the Grafana dashboard names a metric the agent exports, and it exports every family the list "
    "of names promises and no other",
    "[dashboard]") {
  const YAML::Node dashboard = YAML::LoadFile(source_path("conf/grafana-dashboard.json"));
  std::vector<std::string> exprs;
  collect_exprs(dashboard["panels"], exprs);
  REQUIRE(exprs.size() >= 15);
  for (const auto& panel : dashboard["panels"]) {
    if (panel["type"].as<std::string>() == "row") continue;
    INFO(panel["title"].as<std::string>());
    CHECK(panel["targets"].size() > 0);
    CHECK_FALSE(panel["description"].as<std::string>().empty());
  }

  // An agent with every kind of component the panels and the list know: TCP (with reverse DNS and
  // an optional channel), TLS, RELP, Avro and UDP sources, an Avro sink (with nothing to send), a spillable channel,
  // Kafka sinks, one of which fails (its messages are larger than its producer takes; in a sink group), so that the
  // failure families have samples too.
  TempDir dir;
  const CertificateFiles certs = make_certificates(dir.path());
  std::ofstream(dir.file("a.properties"))
      << "a.sources = s t u r v\na.channels = c bad fwd\na.sinks = k broken av\n"
      << "a.sources.v.type = avro\na.sources.v.bind = 127.0.0.1\na.sources.v.port = 0\na.sources.v.channels = c\n"
      << "a.channels.fwd.type = memory\na.sinks.av.type = avro\na.sinks.av.channel = fwd\n"
      << "a.sinks.av.hostname = 127.0.0.1\na.sinks.av.port = 9\n"
      << "a.sources.s.type = multiport_syslogtcp\na.sources.s.host = 127.0.0.1\na.sources.s.ports = 0\n"
      << "a.sources.s.channels = c bad\na.sources.s.clientHostnameHeader = host\na.sources.s.selector.optional = bad\n"
      << "a.sources.r.type = relp\na.sources.r.host = 127.0.0.1\na.sources.r.port = 0\na.sources.r.channels = c\n"
      << "a.sources.t.type = multiport_syslogtcp\na.sources.t.host = 127.0.0.1\na.sources.t.ports = 0\n"
      << "a.sources.t.channels = c\na.sources.t.ssl = true\na.sources.t.ssl.certificate = " << certs.server_cert
      << "\na.sources.t.ssl.key = " << certs.server_key << "\n"
      << "a.sources.u.type = syslogudp\na.sources.u.host = 127.0.0.1\na.sources.u.port = 0\na.sources.u.channels = c\n"
      << "a.channels.c.type = spillablememory\na.channels.c.checkpointDir = " << dir.file("cp")
      << "\na.channels.c.dataDirs = " << dir.file("data") << "\na.channels.bad.type = memory\n"
      << "a.sinks.k.type = kafka\na.sinks.k.channel = c\na.sinks.k.brokerList = embedded\na.sinks.k.topic = t\n"
      << "a.sinks.broken.type = kafka\na.sinks.broken.channel = bad\na.sinks.broken.brokerList = embedded\n"
      << "a.sinks.broken.topic = t\na.sinks.broken.kafka.producer.message.max.bytes = 1000\n"
      << "a.sinkgroups = g\na.sinkgroups.g.sinks = broken\na.sinkgroups.g.processor.type = failover\n";
  ChildProcess agent({bin("sluice"), "-f", dir.file("a.properties"), "-n", "a", "--metrics", "127.0.0.1:0",
                      "--ready-file", dir.file("ready"), "--shutdown-timeout", "2s"},
                     dir.file("agent.log"));
  const std::string ready = wait_for_file(dir.file("ready"), 20s);
  INFO(read_file(dir.file("agent.log")));
  REQUIRE_FALSE(ready.empty());
  const int port = std::stoi(value_of(ready, "metrics.port"));
  const int fd = connect_loopback(static_cast<uint16_t>(std::stoi(value_of(ready, "source.s.ports"))));
  const std::string line = "<13>Dec  2 10:00:00 h app: " + std::string(1500, 'x') + "\n";
  REQUIRE(::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  ::close(fd);
  std::string text;
  CHECK(eventually(
      [&] {
        text = http_get(port, "/metrics");
        return text.find("sluice_sink_delivery_errors_total{") != std::string::npos &&
               text.find("sluice_kafka_broker_rtt_p99_seconds{") != std::string::npos;
      },
      20s));
  agent.signal(SIGTERM);
  CHECK(agent.wait(30s).has_value());

  const std::set<std::string> exported = families(text);
  static const std::regex metric("sluice_[a-z0-9_]+");
  size_t named = 0;
  for (const std::string& expr : exprs) {
    INFO(expr);
    bool any = false;
    for (auto it = std::sregex_iterator(expr.begin(), expr.end(), metric); it != std::sregex_iterator(); ++it) {
      any = true;
      ++named;
      CHECK(exported.count(it->str()) == 1);
    }
    CHECK(any);
  }
  CHECK(named >= exprs.size());

  std::set<std::string> listed;
  for (const sluice::metric_names::Family& family : sluice::metric_names::kFamilies) {
    listed.insert(std::string(family.name));
    INFO("listed in agent/api/metric_names.h, not exported: " << family.name);
    CHECK(exported.count(std::string(family.name)) == 1);
    // Its help and type are the table's, whoever exports it (one row per family).
    const char* type = family.type == sluice::metric_names::Type::counter ? "counter"
                       : family.type == sluice::metric_names::Type::gauge ? "gauge"
                                                                          : "histogram";
    CHECK_THAT(text, Catch::Contains("# HELP " + std::string(family.name) + " " + family.help + "\n"));
    CHECK_THAT(text, Catch::Contains("# TYPE " + std::string(family.name) + " " + type + "\n"));
  }
  // `sluice --print-metric-names` prints the same table, for scripts: one line per family.
  REQUIRE(run({bin("sluice"), "--print-metric-names"}, dir.file("names.txt"), 10s) == 0);
  const std::string table = read_file(dir.file("names.txt"));
  size_t lines = 0;
  for (const sluice::metric_names::Family& family : sluice::metric_names::kFamilies) {
    CHECK_THAT(table, Catch::Contains(std::string(family.constant) + "\t" + family.name + "\t"));
    ++lines;
  }
  CHECK(static_cast<size_t>(std::count(table.begin(), table.end(), '\n')) == lines);
  for (const std::string& name : exported) {
    const bool histogram_series = name.ends_with("_bucket") || name.ends_with("_sum") || name.ends_with("_count");
    if (histogram_series && !listed.count(name)) continue;  // a listed histogram's series
    INFO("exported, not in agent/api/metric_names.h: " << name);
    CHECK(listed.count(name) == 1);
  }
}
