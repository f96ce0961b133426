// sluice-loadgen: a rate-controlled syslog blaster (TCP, or UDP with --udp) whose every event
// carries a connection id and sequence number; --verify reads them back from Kafka and proves
// none was lost or duplicated (over UDP: none lost without a counted drop); --receive is a
// discard receiver to measure senders against. Each mode is a file of loadgen/cli/; this only
// wires them to the command line.

#include <signal.h>

#include <iostream>

#include <CLI/CLI.hpp>

#include "loadgen/cli/commands.h"

int main(int argc, char** argv) {
  using namespace sluice::loadgen::cli;
  // A receiver that resets a connection must not kill us (OpenSSL's writes have no MSG_NOSIGNAL):
  // the write fails, is counted as possibly lost, and the connection comes back.
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"sluice-loadgen: send numbered syslog events over TCP or UDP; --verify reads them back from Kafka"};
  CommonOptions common;
  SendCommand send;
  add_send_options(app, send, common);
  VerifyCommand verify;
  add_verify_options(app, verify, common);
  OffsetsCommand offsets;
  add_offsets_options(app, offsets);
  ReceiveCommand receive;
  add_receive_options(app, receive);
  bool man_page = false;
  app.add_flag("--print-man-page", man_page, "Print this manual as roff")->group("");
  CLI11_PARSE(app, argc, argv);
  if (man_page) return print_man_page(app);
  try {
    if (receive.port >= 0) return run_receive(receive, common);
    if (offsets.offsets || offsets.watch) return run_offsets(offsets, common);
    if (verify.verify) return run_verify(verify, common);
    return run_send(send, common);
  } catch (const std::exception& e) {
    std::cerr << "sluice-loadgen: " << e.what() << "\n";
    return 2;
  }
}
