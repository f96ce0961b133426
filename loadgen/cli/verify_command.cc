// sluice-loadgen --verify: read the topic back from Kafka and check that every event sent arrived
// once (over UDP: none missing without a counted drop).

#include <iostream>

#include "loadgen/cli/commands.h"

namespace sluice::loadgen::cli {

void add_verify_options(CLI::App& app, VerifyCommand& v, CommonOptions& common) {
  app.add_flag("--verify", v.verify, "Verify mode: read the topic back from Kafka and check every event arrived once");
  app.add_option("--bootstrap", common.bootstrap, "Verify/offsets: Kafka bootstrap servers");
  app.add_option("--topic", common.topic, "Verify/offsets: topic")->capture_default_str();
  app.add_option("--expect", v.expect_files,
                 "Verify: the sender's --summary-json, so that lost tail events count too; repeat it for several "
                 "sends into the topic, each on connection ids of its own (--first-connection)");
  app.add_option("--idle", v.idle,
                 "Verify: stop after every partition is read to its end and nothing new came for this long")
      ->capture_default_str();
  app.add_option("--timeout", v.timeout, "Verify: give up after this long")->capture_default_str();
  app.add_option("--counted-drops", v.counted_drops,
                 "Verify a UDP run: the datagrams the agent counted as dropped (the sum of its "
                 "sluice_source_udp_kernel_drops_total, sluice_source_datagrams_unread_at_shutdown_total and "
                 "sluice_source_events_dropped_at_shutdown_total); missing datagrams beyond these and the "
                 "backlog's drops fail the verdict");
  app.add_option("--from-offset", v.options.from_offset, "Verify: start every partition at this offset");
  app.add_option("--from-time", v.options.from_time_ms,
                 "Verify: start at the first message at or after this time (ms since epoch)");
}

int run_verify(VerifyCommand v, const CommonOptions& common) {
  if (common.bootstrap.empty()) throw std::invalid_argument("--verify needs --bootstrap");
  const SenderSummary sent = v.expect_files.empty() ? SenderSummary{} : read_sender_summaries(v.expect_files);
  if (v.counted_drops && !sent.udp)
    throw std::invalid_argument("--counted-drops is for UDP runs: give the --udp sender's summary with --expect");
  v.options.idle = duration_arg(v.idle, "--idle");
  v.options.timeout = duration_arg(v.timeout, "--timeout");
  v.options.counted_drops = v.counted_drops;
  const Verdict verdict = verify_topic(common.bootstrap, common.topic, sent, v.options);
  std::cout << verdict.report();
  return verdict.ok() ? 0 : 1;
}

}  // namespace sluice::loadgen::cli
