// sluice: syslog over TCP in, Kafka out. Usage mirrors `flume-ng agent -f FILE -n AGENT`. Each
// command is a file of agent/cli/, or a tool's own (top/top_cli.h); this only wires them to the
// command line.

#include <librdkafka/rdkafka.h>
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "agent/cli/commands.h"
#include "top/top_cli.h"

int main(int argc, char** argv) {
  using namespace sluice::cli;
  CLI::App app{"sluice " SLUICE_VERSION ": syslog over TCP into Apache Kafka, configured like Flume"};
  RunOptions run;
  add_run_options(app, run);
  // The librdkafka it runs with: linked in (or, built with SLUICE_SYSTEM_RDKAFKA, the shared one loaded).
  app.set_version_flag("-V,--version",
                       std::string("sluice " SLUICE_VERSION " (librdkafka ") + rd_kafka_version_str() + ")");
  bool man_page = false, metric_names = false;
  app.add_flag("--print-man-page", man_page, "Print this manual as roff (man sluice)")->group("");
  app.add_flag("--print-metric-names", metric_names,
               "Print every metric family the agent exports, one per line: its constant, name, type and help "
               "(what scripts read instead of spelling names)");
  ConfigCommand config;
  add_config_command(app, config);
  std::vector<std::unique_ptr<ToolCommand>> tools;
  tools.push_back(sluice::top::make_top_command());
  for (const auto& tool : tools) tool->add(app);
  CLI11_PARSE(app, argc, argv);
  for (const auto& tool : tools)
    if (tool->parsed()) return tool->run();
  if (config.command->parsed()) return run_config_command(config);
  if (man_page) return print_man_page(app);
  if (metric_names) return print_metric_names();
  return run_agent(run);
}
