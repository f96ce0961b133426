// `sluice --check -f FILE`: the file validated as a start would, nothing opened or contacted.

#include <iostream>

#include "agent/agent.h"
#include "agent/cli/commands.h"
#include "agent/config/config_file.h"

namespace sluice::cli {

int check_configuration(const RunOptions& o) {
  const config::AgentConfig model = config::assemble(config::load_config_file(o.file), o.agent_name, o.file);
  const Agent agent(model);
  std::cout << o.file << ": configuration of agent '" << o.agent_name << "' is valid (" << agent.source_count()
            << " source(s), " << agent.channel_count() << " channel(s), " << agent.sink_count() << " sink(s))\n"
            << "memory bound: " << agent.memory_bound().describe() << "\n";
  return 0;
}

}  // namespace sluice::cli
