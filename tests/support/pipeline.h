#pragma once
// The processes of an end-to-end test — broker, agent, load generator, verifier — started in
// one scratch directory and ended by PID when the Pipeline goes out of scope.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace sluice::test {

// The seed's shape: one source on two free ports, a 60,000-event memory channel, ten sinks
// pinned to partitions 0-9 of `topic`. `producer` lines are appended to every sink as
// `kafka.producer.<line>`.
std::string ten_sink_config(const std::string& brokers, const std::vector<std::string>& producer,
                            const std::string& topic = "ApacheLog");

// `config` (from ten_sink_config) with its memory channel replaced by `channel_lines` (t.channels.c1.*).
std::string with_channel(std::string config, const std::string& channel_lines);

// `config` (from ten_sink_config) with a spillablememory channel on `data_dir` in place of its
// memory channel: 20,000 events in memory, transactions of 8,000.
std::string with_spillable_channel(std::string config, const std::string& data_dir);

// `config` (from ten_sink_config) with its source on two free ports given in the file (free_ports)
// rather than port 0, so that a restarted agent, or a source rebuilt by a reload, listens where
// the senders reconnect.
std::string with_fixed_ports(std::string config);

// The agent's last word, its "stopped: ..." line, as numbers (found = false if there is none).
struct ShutdownAccount {
  bool found = false;
  uint64_t read = 0, filtered = 0, unrouted = 0, optional_dropped = 0, in = 0, replayed = 0, sent = 0,
           lost_after_handover = 0, possibly_lost = 0, discarded = 0, failed = 0, lost = 0, lost_in_channels = 0,
           never_put = 0, kept = 0, unreadable = 0, possibly_duplicated = 0, unread_bytes = 0, cut = 0,
           connections_cut = 0;
  // What the agent says it holds or let go balances: everything put (or replayed) was sent,
  // discarded, lost in a channel, kept on disk, or found unreadable there.
  bool balances() const { return in + replayed == sent + discarded + lost_in_channels + kept + unreadable; }
};
// The last run's (the log of a restarted agent holds one per run: shutdown_accounts).
ShutdownAccount shutdown_account(const std::string& agent_log);
std::vector<ShutdownAccount> shutdown_accounts(const std::string& agent_log);

// The lines of `log` that contain any of `words` (for a failure's message).
std::string log_lines_with(const std::string& log, const std::vector<std::string>& words);

// From the verifier's report: "... duplicates N, missing M ..." (UINT64_MAX if absent).
uint64_t duplicates_in(const std::string& report);
uint64_t missing_in(const std::string& report);

// acks=all with idempotence: retries inside librdkafka cannot duplicate; short reconnect
// backoff so that tests do not wait out librdkafka's default 10 s after the broker returns.
inline const std::vector<std::string> kAcksAll{"acks = all", "enable.idempotence = true", "linger.ms = 5",
                                               "compression.codec = snappy", "reconnect.backoff.max.ms = 500"};

class Pipeline {
 public:
  Pipeline();
  ~Pipeline();
  const TempDir& dir() const { return dir_; }

  // sluice-kafka-mock with a control FIFO; returns the bootstrap address.
  // (`more_topics` beside ApacheLog, ten partitions each.)
  const std::string& start_broker(const std::vector<std::string>& more_topics = {});
  // Or a broker started elsewhere (a real Kafka): verify() and stored() read `topic` there.
  void use_kafka(const std::string& bootstrap, const std::string& topic);
  const std::string& topic() const { return topic_; }
  void control_broker(const std::string& command);

  // The agent program start_agent runs (default: this build's).
  void use_agent_program(const std::string& path) { agent_program_ = path; }
  // Starts the agent on `config` and waits until it is listening.
  void start_agent(const std::string& config, const std::string& agent_name = "t",
                   const std::vector<std::string>& extra_args = {});
  int metrics_port() const { return metrics_port_; }  // with --metrics 127.0.0.1:0 among extra_args
  ChildProcess& agent() { return *agent_; }
  std::string agent_log() const { return read_file(dir_.file("agent.log")); }
  long agent_peak_rss_kb() const;  // VmHWM of the running agent
  long agent_rss_kb() const;       // VmRSS of the running agent
  std::optional<int> stop_agent(std::chrono::milliseconds timeout);

  // The ports the agent listens on, as the last start_agent found them.
  std::vector<uint16_t> agent_ports() const;
  // Where send() sends from now on (127.0.0.1:port each), in place of the agent's ports.
  void send_to(const std::vector<uint16_t>& ports);

  // sluice-loadgen against the agent's ports with `args`; the summary goes to sent.json. A send
  // that names a count (-n) and no duration (-d) is bounded by a quarter of `timeout`.
  int send(const std::vector<std::string>& args, std::chrono::milliseconds timeout = std::chrono::seconds(120));
  // send(args) while the broker goes down `after` the start and comes back `outage` later.
  int send_through_outage(std::chrono::milliseconds after, std::chrono::milliseconds outage,
                          const std::vector<std::string>& args);
  // The verifier against sent.json; `report` gets what it printed; `extra_args` to the verifier.
  int verify(std::string& report, const std::string& bootstrap = "", const std::vector<std::string>& extra_args = {});
  // verify() again and again, `every` apart, until it finds nothing missing or `timeout` passes;
  // `report` holds its last report.
  bool verify_until_complete(std::string& report, std::chrono::milliseconds timeout,
                             std::chrono::milliseconds every = std::chrono::seconds(1));
  // Messages stored in ApacheLog (sum of high watermarks).
  uint64_t stored() const;
  // Sends `events` over two connections, then waits up to `timeout` for the topic to hold
  // `stored_total` messages in all: false if the sender failed or they did not land.
  bool send_until_stored(uint64_t events, uint64_t stored_total,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // The sum of a metric's samples on the agent's /metrics (needs --metrics 127.0.0.1:0).
  double metric(const std::string& name) const;
  // Until every Kafka sink's own topic and partition are served (sluice_sink_destination_served):
  // a sink takes nothing before, so a fault meant to meet its events comes after this.
  void wait_until_served(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  const std::string& bootstrap() const { return bootstrap_; }

 private:
  TempDir dir_;
  std::unique_ptr<ChildProcess> broker_;
  std::unique_ptr<ChildProcess> agent_;
  std::string bootstrap_;
  std::string topic_ = "ApacheLog";
  std::vector<std::string> targets_;
  int metrics_port_ = 0;
  std::string agent_program_ = bin("sluice");
};

// Reloads counted under `result` (applied, unchanged, refused, failed) by the agent of `p`.
double reloads(const Pipeline& p, const std::string& result);
// Rewrites the agent's file and sends SIGHUP; waits until the reload is counted under `result`.
bool reload_to(Pipeline& p, const std::string& config, const std::string& result);
// The ports the ready file says `source` listens on ("" if none).
std::string ready_ports(const Pipeline& p, const std::string& source);

}  // namespace sluice::test
