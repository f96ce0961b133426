// sluice-loadgen --print-man-page: the manual page, its options from the command line.

#include <iostream>

#include "loadgen/cli/commands.h"
#include "tools/man_page.h"

namespace sluice::loadgen::cli {

int print_man_page(const CLI::App& app) {
  std::cout << tools::man_page(
      app, "sluice-loadgen", "send numbered syslog events to an agent, and verify them in Kafka",
      {"sluice-loadgen -t HOST:PORT [OPTIONS]", "sluice-loadgen --verify --bootstrap BROKERS [OPTIONS]"},
      "sluice " SLUICE_VERSION,
      {{"EXIT STATUS",
        "0: sent (or, with --verify, every event found once); 1: events were missing or "
        "duplicated, or an argument is wrong."},
       {"SEE ALSO", "sluice(1), sluice-kafka-mock(1)."}});
  return 0;
}

}  // namespace sluice::loadgen::cli
