// `sluice --print-man-page`: the manual page (man sluice), its options from the command line.

#include <iostream>

#include "agent/cli/commands.h"
#include "tools/man_page.h"

namespace sluice::cli {

int print_man_page(const CLI::App& app) {
  std::cout << tools::man_page(
      app, "sluice", "syslog over TCP, TLS, UDP and RELP into Apache Kafka, configured like Flume",
      {"sluice -f FILE [-n AGENT] [OPTIONS]", "sluice --check -f FILE [-n AGENT]", "sluice config convert FILE",
       "sluice top [--metrics HOST:PORT] [--interval 1s] [--once]"},
      "sluice " SLUICE_VERSION,
      {{"SIGNALS",
        "SIGTERM, SIGINT: stop reading, drain the channels into Kafka for up to --shutdown-timeout, then exit 0 "
        "with an account of every event (sent, discarded, lost, kept on disk).\n\n"
        "SIGHUP (systemctl reload): read the file again and validate it completely; a file that does not "
        "validate is refused, logged as at start, and the running configuration stays. Otherwise what changed "
        "is applied: unchanged components keep running (their connections, their channel's contents); changed "
        "or removed sources stop as at shutdown; a changed channel is drained first and what is left moves "
        "into its successor; sinks are replaced without losing what they took. Sources read their TLS "
        "certificates and keys again. Counted in sluice_config_reloads_total{result}."},
       {"TOP",
        "sluice top reads a running agent's metrics endpoint (--metrics HOST:PORT, default 127.0.0.1:34545; "
        "the agent's own --metrics or <agent>.monitoring.address) every --interval and shows, per source, channel "
        "and sink: events/s, MB/s and connections; channel fill, put and take rates, the share of time sources "
        "waited for room (blocked %) and what is on disk; events sent/s, the Kafka producer's queue, broker "
        "round-trip times, brokers up, and the pipeline latency p50/p99 of the events committed in the "
        "interval; then every failure counted since the agent started, by component and reason, with its rate. "
        "q, Ctrl-C or Ctrl-\\ quits; Ctrl-Z suspends it under a shell with job control (the terminal restored "
        "either way); a terminal too small shows what fits and how many lines it left out. Not on a terminal it "
        "prints a plain view each interval; --once prints one and exits "
        "(1 if the agent cannot be read)."},
       {"FILES",
        "/etc/sluice/agent.properties, /etc/sluice/agent.yaml: the packaged configuration (Flume properties, or "
        "YAML).\n\n/etc/default/sluice: SLUICE_AGENT and SLUICE_OPTS for sluice.service; sluice@NAME.service "
        "runs /etc/sluice/NAME.properties as agent NAME.\n\n/usr/share/doc/sluice/REFERENCE.md: every "
        "component's properties (also sluice --print-config-reference)."},
       {"EXIT STATUS",
        "0: stopped cleanly (or --check found the file valid); 1: the configuration or the "
        "command line is wrong (the message names file, line and key); 2: a fatal error."},
       {"SEE ALSO",
        "sluice-loadgen(1), sluice-kafka-mock(1), systemctl(1), kcat(1); the README and docs/ in "
        "/usr/share/doc/sluice."}});
  return 0;
}

}  // namespace sluice::cli
