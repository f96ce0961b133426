// sluice-kafka-mock: the embedded Kafka (librdkafka's mock cluster) in a process of its own,
// for tests and benchmarks that need the broker to outlive the agent. Runs until SIGTERM or
// SIGINT. Fault injection from outside: SIGUSR1 takes every broker down, SIGUSR2 brings them
// back up; --control FIFO takes one command per line (down, up, rtt MS, errors API COUNT ERROR).

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "sinks/kafka/mock_cluster.h"
#include "tools/man_page.h"

int main(int argc, char** argv) {
  CLI::App app{"sluice-kafka-mock: an in-memory Kafka cluster (librdkafka's mock) on loopback"};
  std::vector<std::string> topics{"ApacheLog"};
  std::string bootstrap_file;
  int partitions = 10, brokers = 1;
  app.add_option("--topic", topics, "Topic to create (repeat for several)")->capture_default_str();
  app.add_option("--partitions", partitions, "Partitions of each topic")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--brokers", brokers, "Brokers in the cluster")->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--bootstrap-file", bootstrap_file, "Write the bootstrap address here once ready");
  std::string control;
  app.add_option("--control", control,
                 "Create this FIFO and apply the commands written to it, one per line: down [BROKER], up [BROKER], "
                 "rtt MS [BROKER], errors API COUNT ERROR (e.g. errors produce 20 NOT_LEADER_FOR_PARTITION)");
  bool print_man_page = false;
  app.add_flag("--print-man-page", print_man_page, "Print this manual as roff")->group("");
  CLI11_PARSE(app, argc, argv);
  if (print_man_page) {
    std::cout << sluice::tools::man_page(
        app, "sluice-kafka-mock", "an in-memory Kafka cluster on loopback, for tests and demos",
        {"sluice-kafka-mock [OPTIONS]"}, "sluice " SLUICE_VERSION,
        {{"NOTES",
          "It prints its bootstrap address and serves until SIGINT or SIGTERM. It keeps "
          "everything in memory: not a broker for production."},
         {"SEE ALSO", "sluice(1), sluice-loadgen(1)."}});
    return 0;
  }

  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  try {
    sluice::kafka::MockCluster cluster(brokers);
    for (const std::string& topic : topics) cluster.create_topic(topic, partitions);
    std::thread controller;
    if (!control.empty()) {
      ::unlink(control.c_str());
      if (::mkfifo(control.c_str(), 0600) != 0) throw std::runtime_error("cannot create FIFO " + control);
      controller = std::thread([&cluster, control] {
        // Opened read-write so that it never sees end-of-file between writers.
        FILE* in = ::fdopen(::open(control.c_str(), O_RDWR), "r");
        char buffer[512];
        while (in && std::fgets(buffer, sizeof buffer, in)) {
          std::string line(buffer);
          while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
          if (line.empty()) continue;
          const std::string error = cluster.apply_command(line);
          std::cerr << "sluice-kafka-mock: " << line << (error.empty() ? ": done" : ": " + error) << std::endl;
        }
      });
      controller.detach();
    }
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
