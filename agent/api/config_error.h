#pragma once
// Errors found while reading or validating a configuration. Thrown only at start-up
// (and by --check); main.cc prints what() and exits 1. The hot path never throws.

#include <stdexcept>
#include <string>

namespace sluice::config {

// Where a value came from, so every error can name the file and line.
struct SourceLocation {
  std::string file;
  int line = 0;  // 0: not from a file (a default, the command line)

  std::string to_string() const {
    if (file.empty()) return "<built-in>";
    return line > 0 ? file + ":" + std::to_string(line) : file;
  }
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sluice::config
