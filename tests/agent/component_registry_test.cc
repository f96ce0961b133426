#include <catch2/catch.hpp>

#include "agent/component_registry.h"
#include "tests/support/process.h"

using namespace sluice;

TEST_CASE("conf/REFERENCE.md is what the property tables generate", "[config][golden]") {
  // Regenerate with: build/bin/sluice --print-config-reference > conf/REFERENCE.md
  CHECK(test::read_file(test::source_path("conf/REFERENCE.md")) == config_reference());
}
