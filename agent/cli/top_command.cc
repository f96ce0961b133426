// `sluice top`: its options; the view itself is top/ (top_command.h).

#include <iostream>

#include "agent/api/config_tree.h"
#include "agent/cli/commands.h"

namespace sluice::cli {

void add_top_command(CLI::App& app, TopCommand& top) {
  top.command =
      app.add_subcommand("top", "Show a running agent's metrics in the terminal, refreshed each interval (q quits)");
  top.command->add_option("--metrics", top.options.address, "The agent's metrics endpoint: host:port (its --metrics)")
      ->capture_default_str();
  top.command->add_option("--interval", top.interval, "How often to refresh (e.g. 1s, 500ms)")->capture_default_str();
  top.command->add_flag("--once", top.options.once,
                        "Print one view (two readings an interval apart) as plain text and exit; 1 if unreachable");
}

int run_top_command(const TopCommand& top) {
  top::TopOptions options = top.options;
  try {
    options.interval = duration_option(top.interval, "--interval");
    if (options.interval.count() < 100) throw config::ConfigError("--interval: at least 100ms");
  } catch (const config::ConfigError& e) {
    std::cerr << "sluice top: " << e.what() << "\n";
    return 1;
  }
  return top::run_top(options);
}

}  // namespace sluice::cli
