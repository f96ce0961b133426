// sluice-kafka-mock: the embedded Kafka (librdkafka's mock cluster) in a process of its own,
// for tests and benchmarks that need the broker to outlive the agent. Runs until SIGTERM or
// SIGINT. Fault injection from outside: SIGUSR1 takes every broker down, SIGUSR2 brings them
// back up.

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "sinks/kafka/mock_cluster.h"

int main(int argc, char** argv) {
  CLI::App app{"sluice-kafka-mock: an in-memory Kafka cluster (librdkafka's mock) on loopback"};
  std::string topic = "ApacheLog", bootstrap_file;
  int partitions = 10, brokers = 1;
  app.add_option("--topic", topic, "Topic to create")->capture_default_str();
  app.add_option("--partitions", partitions, "Partitions of the topic")->check(CLI::Range(1, 10000))->capture_default_str();
  app.add_option("--brokers", brokers, "Brokers in the cluster")->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--bootstrap-file", bootstrap_file, "Write the bootstrap address here once ready");
  CLI11_PARSE(app, argc, argv);

  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  try {
    sluice::kafka::MockCluster cluster(brokers);
    cluster.create_topic(topic, partitions);
    std::cout << cluster.bootstrap_servers() << std::endl;
    if (!bootstrap_file.empty()) {
      const std::string tmp = bootstrap_file + ".tmp";
      std::ofstream(tmp) << cluster.bootstrap_servers() << "\n";
      std::rename(tmp.c_str(), bootstrap_file.c_str());
    }
    while (true) {
      int sig = 0;
      sigwait(&signals, &sig);
      if (sig == SIGUSR1 || sig == SIGUSR2) {
        cluster.set_broker_down(0, sig == SIGUSR1);
        std::cerr << "sluice-kafka-mock: brokers " << (sig == SIGUSR1 ? "down" : "up") << std::endl;
        continue;
      }
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "sluice-kafka-mock: " << e.what() << "\n";
    return 1;
  }
}
