#pragma once
// `sluice top` as a command of the sluice program (agent/cli/commands.h: ToolCommand).

#include <memory>

#include "agent/cli/commands.h"

namespace sluice::top {

// `sluice top [--metrics HOST:PORT] [--interval 1s] [--once]`.
std::unique_ptr<cli::ToolCommand> make_top_command();

}  // namespace sluice::top
