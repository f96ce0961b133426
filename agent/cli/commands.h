#pragma once
// The agent's command line, one file per command: run (the agent itself: run_command.cc),
// --check (check_command.cc), config convert (config_command.cc), and the manual (man_page.cc).
// A tool that is a command of the same program (top/: `sluice top`) brings its own, as a
// ToolCommand; main/sluice_main.cc wires them all to CLI11.

#include <chrono>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace sluice::cli {

// `sluice -f FILE [-n AGENT] [OPTIONS]`, and `--check`.
struct RunOptions {
  std::string file, agent_name = "agent", ready_file, shutdown_timeout = "30s", status_interval = "10s";
  std::string log_level = "info", metrics_address, watch_interval = "30s";
  bool watch_config = false, check = false, print_reference = false;
  std::vector<std::string> defines;  // -D, as flume-ng's
};
void add_run_options(CLI::App& app, RunOptions& options);
int run_agent(const RunOptions& options);
// Validates the file as a start would (building every component, opening nothing) and prints
// what it holds and its memory bound; returns 0, or throws what run_agent reports (a
// config::ConfigError: status 1).
int check_configuration(const RunOptions& options);

// `sluice config convert FILE`.
struct ConfigCommand {
  CLI::App* command = nullptr;
  std::string convert_file;
};
void add_config_command(CLI::App& app, ConfigCommand& config);
int run_config_command(const ConfigCommand& config);

// A subcommand a tool adds to the program: its options on `app` (the parent), then, if the command
// line named it, its run.
class ToolCommand {
 public:
  virtual ~ToolCommand() = default;
  virtual void add(CLI::App& app) = 0;
  virtual bool parsed() const = 0;
  virtual int run() = 0;  // the exit status
};

// `sluice --print-man-page`: the manual, from the options declared on `app`.
int print_man_page(const CLI::App& app);
// `sluice --print-metric-names`: agent/api/metric_names.h's table, tab-separated.
int print_metric_names();

// A duration given on the command line (30s, 500ms): a ConfigError naming the option if not.
std::chrono::milliseconds duration_option(const std::string& text, const std::string& option);

}  // namespace sluice::cli
