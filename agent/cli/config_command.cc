// `sluice config convert FILE`: a Flume properties file as YAML, or YAML as properties, as written:
// ${...} references and config filters stay (nothing is run, no secret is printed).

#include <iostream>

#include "agent/cli/commands.h"
#include "agent/config/config_file.h"

namespace sluice::cli {

void add_config_command(CLI::App& app, ConfigCommand& config) {
  config.command = app.add_subcommand("config", "Configuration tools");
  config.command
      ->add_subcommand("convert",
                       "Print FILE in the other format (properties <-> YAML) as written: ${...} references and config "
                       "filters are kept, no filter's command is run")
      ->add_option("FILE", config.convert_file, "A .properties or .yaml file")
      ->required();
  config.command->require_subcommand(1);
}

int run_config_command(const ConfigCommand& config) {
  try {
    const config::FlatConfig flat = config::load_config_file_as_written(config.convert_file);
    std::cout << (config::format_of(config.convert_file) == config::FileFormat::yaml ? config::to_properties(flat)
                                                                                     : config::to_yaml(flat));
    return 0;
  } catch (const config::ConfigError& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace sluice::cli
