#include <catch2/catch.hpp>

#include "channels/spillable/crc32c.h"

using namespace sluice::spill;

TEST_CASE("crc32c matches the Castagnoli check value", "[spill]") {
  CHECK(crc32c("123456789", 9) == 0xE3069283);
  CHECK(crc32c("", 0) == 0);
  // Incremental equals whole.
  CHECK(crc32c("6789", 4, crc32c("12345", 5)) == 0xE3069283);
}
