#pragma once
// CRC-32C (Castagnoli), the checksum of every record in a spill segment: the SSE4.2 crc32
// instruction when the CPU has it (any x86-64 of the last 15 years), a table otherwise.

#include <cstddef>
#include <cstdint>

namespace sluice::spill {

uint32_t crc32c(const void* data, size_t length, uint32_t crc = 0);

}  // namespace sluice::spill
