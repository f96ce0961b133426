#pragma once
// Reading a field of a program's one-line JSON summary (sluice-loadgen's, the verifier's).

#include <cstdint>
#include <regex>
#include <string>

namespace sluice::test {

// The whole number under `key`; UINT64_MAX if the summary has none.
inline uint64_t json_count(const std::string& json, const std::string& key) {
  std::smatch m;
  return std::regex_search(json, m, std::regex("\"" + key + "\":(\\d+)")) ? std::stoull(m[1]) : UINT64_MAX;
}

// The number under `key`, fraction and exponent included; -1 if the summary has none.
inline double json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  return std::regex_search(json, m, std::regex("\"" + key + "\":([0-9.eE+-]+)")) ? std::stod(m[1].str()) : -1;
}

}  // namespace sluice::test
