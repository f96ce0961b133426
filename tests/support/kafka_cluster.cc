#include "tests/support/kafka_cluster.h"

#include <tuple>

#include <map>
#include <memory>
#include <stdexcept>

#include <unistd.h>

namespace sluice::test {

using namespace std::chrono_literals;

KafkaCluster& KafkaCluster::shared(Options options) {
  static std::map<std::tuple<int, bool, bool>, std::unique_ptr<KafkaCluster>> clusters;
  auto& cluster = clusters[{options.nodes, options.sasl, options.auto_create}];
  if (!cluster) cluster = std::make_unique<KafkaCluster>(options);
  return *cluster;
}

KafkaCluster::KafkaCluster(Options options) : options_(options) {
  // --owner: should this program die without its destructors (a crash, ctest's timeout), the
  // script's watchdog stops the nodes.
  std::vector<std::string> args{
      "start", dir_.path(), "--nodes", std::to_string(options.nodes), "--owner", std::to_string(::getpid())};
  if (options.sasl) args.push_back("--sasl");
  if (options.auto_create) args.push_back("--auto-create");
  try {
    script(args, 180s);  // the script gives up after 150 s and stops what it started
  } catch (const std::exception&) {
    try {
      script({"stop", dir_.path()}, 60s);  // killed at the timeout: what it had launched
    } catch (const std::exception&) {}
    throw;
  }
  bootstrap_ = read_file(dir_.file("bootstrap"));
  while (!bootstrap_.empty() && bootstrap_.back() == '\n') bootstrap_.pop_back();
  if (options.sasl) {
    sasl_bootstrap_ = read_file(dir_.file("bootstrap.sasl"));
    while (!sasl_bootstrap_.empty() && sasl_bootstrap_.back() == '\n') sasl_bootstrap_.pop_back();
    ssl_bootstrap_ = read_file(dir_.file("bootstrap.ssl"));
    while (!ssl_bootstrap_.empty() && ssl_bootstrap_.back() == '\n') ssl_bootstrap_.pop_back();
  }
}

KafkaCluster::~KafkaCluster() {
  try {
    script({"stop", dir_.path()}, 60s);
  } catch (const std::exception&) {
    // Leaving: the JVMs were sent SIGTERM then SIGKILL by PID; nothing more to do.
  }
}

std::string KafkaCluster::script(const std::vector<std::string>& args, std::chrono::milliseconds timeout) const {
  std::vector<std::string> argv{source_path("tests/kafka/cluster.sh")};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string out = dir_.file("script.out");
  std::remove(out.c_str());
  const int code = run(argv, out, timeout);
  const std::string text = read_file(out);
  if (code != 0)
    throw std::runtime_error("tests/kafka/cluster.sh " + args.front() + " failed (" + std::to_string(code) +
                             "): " + text);
  return text;
}

void KafkaCluster::create_topic(const std::string& topic, int partitions, const std::vector<std::string>& configs) {
  std::vector<std::string> args{"topic", dir_.path(), topic, std::to_string(partitions)};
  for (const std::string& c : configs) args.insert(args.end(), {"--config", c});
  script(args, 90s);
}

int KafkaCluster::leader(const std::string& topic, int partition) const {
  const std::string text = script({"leader", dir_.path(), topic, std::to_string(partition)}, 60s);
  return text.empty() ? -1 : std::stoi(text);
}

void KafkaCluster::kill_node(int node) { script({"kill", dir_.path(), std::to_string(node)}, 30s); }
void KafkaCluster::stop_node(int node) { script({"stop-node", dir_.path(), std::to_string(node)}, 60s); }
void KafkaCluster::restart_node(int node) { script({"restart", dir_.path(), std::to_string(node)}, 180s); }
void KafkaCluster::stop_all() { script({"stop", dir_.path()}, 60s); }
void KafkaCluster::restart_all() {
  for (int n = 1; n <= options_.nodes; ++n) script({"restart", dir_.path(), std::to_string(n), "--no-wait"}, 60s);
  for (int n = 1; n <= options_.nodes; ++n) script({"wait", dir_.path(), std::to_string(n)}, 180s);
}

void KafkaCluster::console_produce(const std::string& topic, const std::string& file,
                                   const std::string& sasl_mechanism) const {
  std::vector<std::string> args{"produce", dir_.path(), topic, file};
  if (!sasl_mechanism.empty()) args.push_back(sasl_mechanism);
  script(args, 60s);
}

std::string KafkaCluster::console_consume(const std::string& topic, int max, std::chrono::milliseconds timeout) const {
  return script({"consume", dir_.path(), topic, std::to_string(max), std::to_string(timeout.count())}, timeout + 60s);
}

std::string KafkaCluster::dump_log(const std::string& topic) const {
  return script({"dump-log", dir_.path(), topic}, 90s);
}

}  // namespace sluice::test
