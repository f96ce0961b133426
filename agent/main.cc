// sluice: syslog over TCP in, Kafka out. Usage mirrors `flume-ng agent -f FILE -n AGENT`.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "agent/agent.h"
#include "agent/component_registry.h"
#include "agent/config/properties_file.h"
#include "agent/config/property_values.h"

namespace {

using namespace sluice;

void write_ready_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
  }
  std::rename(tmp.c_str(), path.c_str());  // readers never see half a file
}

std::chrono::milliseconds duration_option(const std::string& text, const std::string& option) {
  return config::parse_duration(text, config::ValueContext{option, {"command line", 0}}, {.min = 0, .max = 86'400'000});
}

// Waits for SIGINT/SIGTERM, printing a status line every `interval`.
void run_until_signal(Agent& agent, std::chrono::milliseconds interval) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  AgentTotals last = agent.totals();
  auto last_time = Clock::now();
  while (true) {
    timespec timeout{static_cast<time_t>(interval.count() / 1000), static_cast<long>(interval.count() % 1000) * 1'000'000};
    const int sig = sigtimedwait(&signals, nullptr, interval.count() ? &timeout : nullptr);
    if (sig == SIGINT || sig == SIGTERM) {
      spdlog::info("received {}", sig == SIGINT ? "SIGINT" : "SIGTERM");
      return;
    }
    const AgentTotals now = agent.totals();
    const auto now_time = Clock::now();
    const double seconds = std::chrono::duration<double>(now_time - last_time).count();
    spdlog::info("status: in {:.0f} ev/s, out {:.0f} ev/s, channel {:.1f}% full ({} events), {} failed so far",
                 (now.events_in - last.events_in) / seconds, (now.events_out - last.events_out) / seconds,
                 now.channel_capacity ? 100.0 * now.channel_held / now.channel_capacity : 0.0, now.channel_held,
                 now.events_failed);
    last = now;
    last_time = now_time;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sluice " SLUICE_VERSION ": syslog over TCP into Apache Kafka, configured like Flume"};
  std::string file, agent_name = "agent", ready_file, shutdown_timeout = "30s", status_interval = "10s";
  std::string log_level = "info";
  bool check = false, print_reference = false;
  app.add_option("-f,--conf-file", file, "Configuration file (Flume properties)");
  app.add_option("-n,--name", agent_name, "Agent name: the first part of every key (as flume-ng -n)")->capture_default_str();
  app.add_flag("--check", check, "Validate the configuration and exit 0 (valid) or 1; opens no socket, contacts no Kafka");
  app.add_option("--shutdown-timeout", shutdown_timeout,
                 "On SIGTERM/SIGINT: how long to drain the channels into Kafka before giving up (e.g. 30s)")
      ->capture_default_str();
  app.add_option("--status-interval", status_interval, "Log a throughput/fill status line this often; 0 disables")
      ->capture_default_str();
  app.add_option("--ready-file", ready_file,
                 "Once listening, write bound ports and the embedded Kafka's bootstrap here (key=value lines)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();
  app.add_flag("--print-config-reference", print_reference, "Print every component's properties (Markdown) and exit");
  app.set_version_flag("-V,--version", "sluice " SLUICE_VERSION);
  CLI11_PARSE(app, argc, argv);

  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  if (print_reference) {
    std::cout << config_reference();
    return 0;
  }
  if (file.empty()) {
    std::cerr << "sluice: -f FILE is required (see --help)\n";
    return 1;
  }

  // Block the signals before any thread starts, so that only sigtimedwait() receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    const auto drain = duration_option(shutdown_timeout, "--shutdown-timeout");
    const auto interval = duration_option(status_interval, "--status-interval");
    const config::AgentConfig model =
        config::assemble(config::parse_properties(config::read_config_file(file), file), agent_name, file);
    Agent agent(model);
    if (check) {
      std::cout << file << ": configuration of agent '" << agent_name << "' is valid (" << agent.source_count()
                << " source(s), " << agent.channel_count() << " channel(s), " << agent.sink_count() << " sink(s))\n";
      return 0;
    }
    agent.start();
    if (!ready_file.empty()) write_ready_file(ready_file, agent.ready_info());
    run_until_signal(agent, interval);
    agent.stop(drain);
    return 0;
  } catch (const config::ConfigError& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "sluice: fatal: " << e.what() << "\n";
    return 2;
  }
}
