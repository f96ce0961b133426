#pragma once
// sluice-loadgen's command line, one file per mode: send (send_command.cc, the default), --verify
// (verify_command.cc), --offsets and --watch-offsets (offsets_command.cc), --receive
// (receive_command.cc), and the manual (man_page.cc). main.cc only wires them to CLI11.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "loadgen/sender.h"
#include "loadgen/verifier.h"

namespace sluice::loadgen::cli {

// What several modes read.
struct CommonOptions {
  std::string duration = "10s";  // send, --watch-offsets, --receive
  std::string csv;               // send, --watch-offsets
  bool quiet = false;
  std::string bootstrap, topic = "ApacheLog";  // --verify, --offsets
};

struct SendCommand {
  std::vector<std::string> targets;
  SendOptions send;
  std::string ramp = "0s", summary_json, framing = "lf", replay, protocol = "syslog", write_timeout = "60s";
  bool json = false, no_gso = false;
  int window = 0;  // --window; 0: the protocol's default (RELP 128 events, Avro 1 call)
};
void add_send_options(CLI::App& app, SendCommand& send, CommonOptions& common);
int run_send(SendCommand send, const CommonOptions& common);

struct VerifyCommand {
  bool verify = false;
  std::vector<std::string> expect_files;  // one summary per send
  std::string idle = "2s", timeout = "120s";
  uint64_t counted_drops = 0;
  VerifyOptions options;
};
void add_verify_options(CLI::App& app, VerifyCommand& verify, CommonOptions& common);
int run_verify(VerifyCommand verify, const CommonOptions& common);

struct OffsetsCommand {
  bool offsets = false, watch = false;
};
void add_offsets_options(CLI::App& app, OffsetsCommand& offsets);
int run_offsets(const OffsetsCommand& offsets, const CommonOptions& common);

struct ReceiveCommand {
  int port = -1;  // set: the discard receiver
};
void add_receive_options(CLI::App& app, ReceiveCommand& receive);
int run_receive(const ReceiveCommand& receive, const CommonOptions& common);

int print_man_page(const CLI::App& app);

// A duration given on the command line (10s, 2m): an error naming the option if not.
std::chrono::milliseconds duration_arg(const std::string& text, const std::string& option);

}  // namespace sluice::loadgen::cli
