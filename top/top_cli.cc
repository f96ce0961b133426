// `sluice top`: its options; the view itself is top_command.h.

#include "top/top_cli.h"

#include <iostream>

#include "agent/api/config_tree.h"
#include "top/top_command.h"

namespace sluice::top {
namespace {

class TopCli final : public cli::ToolCommand {
 public:
  void add(CLI::App& app) override {
    command_ =
        app.add_subcommand("top", "Show a running agent's metrics in the terminal, refreshed each interval (q quits)");
    command_->add_option("--metrics", options_.address, "The agent's metrics endpoint: host:port (its --metrics)")
        ->capture_default_str();
    command_->add_option("--interval", interval_, "How often to refresh (e.g. 1s, 500ms)")->capture_default_str();
    command_->add_flag("--once", options_.once,
                       "Print one view (two readings an interval apart) as plain text and exit; 1 if unreachable");
  }
  bool parsed() const override { return command_ && command_->parsed(); }
  int run() override {
    TopOptions options = options_;
    try {
      options.interval = cli::duration_option(interval_, "--interval");
      if (options.interval.count() < 100) throw config::ConfigError("--interval: at least 100ms");
    } catch (const config::ConfigError& e) {
      std::cerr << "sluice top: " << e.what() << "\n";
      return 1;
    }
    return run_top(options);
  }

 private:
  CLI::App* command_ = nullptr;
  TopOptions options_;
  std::string interval_ = "1s";
};

}  // namespace

std::unique_ptr<cli::ToolCommand> make_top_command() { return std::make_unique<TopCli>(); }

}  // namespace sluice::top
