#pragma once
#include <span>
#include <string>

#include "agent/api/component_spec.h"

namespace sluice {

// Every component type the agent knows, in the generated component_list.cc: one entry per
// spec a sluice_component() call declares (cmake/sluice_component.cmake).
std::span<const ComponentSpec* const> all_components();

// The spec whose type or alias is `type`; throws ConfigError naming the component's type key
// and the known types otherwise.
const ComponentSpec& find_component(const config::ComponentConfig& component);

// The reference of every component's properties, generated from their tables (Markdown).
std::string config_reference();

}  // namespace sluice
