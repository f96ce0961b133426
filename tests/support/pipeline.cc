#include "tests/support/pipeline.h"

#include "tests/support/eventually.h"
#include "tests/support/test_thread.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sluice::test {

using namespace std::chrono_literals;

std::string ten_sink_config(const std::string& brokers, const std::vector<std::string>& producer,
                            const std::string& topic) {
  std::string text =
      "t.sources = r1\nt.channels = c1\nt.sinks = k0 k1 k2 k3 k4 k5 k6 k7 k8 k9\n"
      "t.sources.r1.type = multiport_syslogtcp\nt.sources.r1.host = 127.0.0.1\nt.sources.r1.ports = 0 0\n"
      "t.sources.r1.channels = c1\nt.sources.r1.batchSize = 1000\n"
      "t.channels.c1.type = memory\nt.channels.c1.capacity = 60000\nt.channels.c1.transactionCapacity = 8000\n";
  for (int i = 0; i < 10; ++i) {
    const std::string k = "t.sinks.k" + std::to_string(i);
    text += k + ".type = org.apache.flume.sink.kafka.KafkaSink\n" + k + ".channel = c1\n" + k +
            ".kafka.bootstrap.servers = " + brokers + "\n" + k + ".kafka.topic = " + topic + "\n" + k +
            ".defaultPartitionId = " + std::to_string(i) + "\n";
    for (const std::string& line : producer) text += k + ".kafka.producer." + line + "\n";
  }
  return text;
}

std::string with_channel(std::string config, const std::string& channel_lines) {
  const std::string memory =
      "t.channels.c1.type = memory\nt.channels.c1.capacity = 60000\nt.channels.c1.transactionCapacity = 8000\n";
  const auto at = config.find(memory);
  if (at == std::string::npos) throw std::invalid_argument("with_channel: not a ten_sink_config");
  return config.replace(at, memory.size(), channel_lines);
}

std::string with_spillable_channel(std::string config, const std::string& data_dir) {
  return with_channel(std::move(config),
                      "t.channels.c1.type = spillablememory\nt.channels.c1.memoryCapacity = 20000\n"
                      "t.channels.c1.transactionCapacity = 8000\nt.channels.c1.dataDir = " +
                          data_dir + "\n");
}

std::string with_fixed_ports(std::string config) {
  const std::string any = "t.sources.r1.ports = 0 0\n";
  const auto at = config.find(any);
  if (at == std::string::npos) throw std::invalid_argument("with_fixed_ports: not a ten_sink_config");
  const std::vector<uint16_t> ports = free_ports(2);
  return config.replace(at, any.size(),
                        "t.sources.r1.ports = " + std::to_string(ports[0]) + " " + std::to_string(ports[1]) + "\n");
}

std::vector<ShutdownAccount> shutdown_accounts(const std::string& agent_log) {
  static const std::regex line(
      R"(stopped: (\d+) events read, (\d+) filtered by interceptors, (\d+) routed to no channel, (\d+) optional )"
      R"(copies dropped, (\d+) events in, (\d+) replayed from disk, )"
      R"((\d+) sent \((\d+) lost after )"
      R"(hand-over, (\d+) possibly lost\), (\d+) discarded, (\d+) )"
      R"(failed, (\d+) lost at shutdown \((\d+) in channels, (\d+) never put\), (\d+) kept on disk, (\d+) )"
      R"(unreadable on disk, (\d+) possibly )"
      R"(duplicated, (\d+) bytes left unread, (\d+) frames cut, (\d+) connections cut)");
  std::vector<ShutdownAccount> accounts;
  for (auto it = std::sregex_iterator(agent_log.begin(), agent_log.end(), line); it != std::sregex_iterator(); ++it) {
    ShutdownAccount& a = accounts.emplace_back();
    uint64_t* fields[] = {&a.read,
                          &a.filtered,
                          &a.unrouted,
                          &a.optional_dropped,
                          &a.in,
                          &a.replayed,
                          &a.sent,
                          &a.lost_after_handover,
                          &a.possibly_lost,
                          &a.discarded,
                          &a.failed,
                          &a.lost,
                          &a.lost_in_channels,
                          &a.never_put,
                          &a.kept,
                          &a.unreadable,
                          &a.possibly_duplicated,
                          &a.unread_bytes,
                          &a.cut,
                          &a.connections_cut};
    for (size_t i = 0; i < std::size(fields); ++i) *fields[i] = std::stoull((*it)[i + 1]);
    a.found = true;
  }
  return accounts;
}

std::string log_lines_with(const std::string& log, const std::vector<std::string>& words) {
  std::string found, line;
  std::istringstream in(log);
  while (std::getline(in, line))
    if (std::any_of(words.begin(), words.end(),
                    [&](const std::string& w) { return line.find(w) != std::string::npos; }))
      found += line + "\n";
  return found;
}

ShutdownAccount shutdown_account(const std::string& agent_log) {
  const std::vector<ShutdownAccount> all = shutdown_accounts(agent_log);
  return all.empty() ? ShutdownAccount{} : all.back();
}

namespace {
// The verifier's summary line: "received R ...: unique U, duplicates D, missing M, reordered O, ...".
uint64_t summary_number(const std::string& report, int field) {
  std::smatch m;
  static const std::regex summary(R"(: unique (\d+), duplicates (\d+), missing (\d+), reordered)");
  if (!std::regex_search(report, m, summary)) return UINT64_MAX;
  return std::stoull(m[field]);
}
}  // namespace

uint64_t duplicates_in(const std::string& report) { return summary_number(report, 2); }
double reloads(const Pipeline& p, const std::string& result) {
  return p.metric("sluice_config_reloads_total{result=\"" + result + "\"}");
}

bool reload_to(Pipeline& p, const std::string& config, const std::string& result) {
  const double before = reloads(p, result);
  std::ofstream(p.dir().file("agent.properties")) << config;
  p.agent().signal(SIGHUP);
  return eventually([&] { return reloads(p, result) == before + 1; }, std::chrono::seconds(30));
}

std::string ready_ports(const Pipeline& p, const std::string& source) {
  std::smatch m;
  const std::string ready = read_file(p.dir().file("ready"));
  return std::regex_search(ready, m, std::regex("source\\." + source + "\\.ports=([^\n]*)")) ? m[1].str() : "";
}

bool Pipeline::verify_until_complete(std::string& report, std::chrono::milliseconds timeout,
                                     std::chrono::milliseconds every) {
  return eventually(
      [&] {
        report.clear();
        verify(report);
        return missing_in(report) == 0;
      },
      timeout, every);
}

uint64_t missing_in(const std::string& report) { return summary_number(report, 3); }

Pipeline::Pipeline() = default;

Pipeline::~Pipeline() {
  if (agent_) agent_->signal(SIGKILL);
  agent_.reset();
  broker_.reset();
}

const std::string& Pipeline::start_broker(const std::vector<std::string>& more_topics) {
  std::vector<std::string> args{bin("sluice-kafka-mock"), "--topic",   "ApacheLog",
                                "--partitions",           "10",        "--bootstrap-file",
                                dir_.file("bootstrap"),   "--control", dir_.file("control")};
  for (const std::string& topic : more_topics) args.insert(args.end(), {"--topic", topic});
  broker_ = std::make_unique<ChildProcess>(args, dir_.file("broker.log"));
  const std::string text = wait_for_file(dir_.file("bootstrap"), 20s);
  if (text.empty()) throw std::runtime_error("the broker did not start: " + read_file(dir_.file("broker.log")));
  bootstrap_ = text.substr(0, text.find('\n'));
  return bootstrap_;
}

void Pipeline::use_kafka(const std::string& bootstrap, const std::string& topic) {
  bootstrap_ = bootstrap;
  topic_ = topic;
}

void Pipeline::control_broker(const std::string& command) {
  // The broker confirms each command it applied with a line in its log; wait for it, so that
  // "down" means down from here on.
  auto confirmations = [&] {
    const std::string log = read_file(dir_.file("broker.log")), done = command + ": done";
    size_t n = 0;
    for (size_t at = log.find(done); at != std::string::npos; at = log.find(done, at + 1)) ++n;
    return n;
  };
  const size_t before = confirmations();
  std::ofstream(dir_.file("control")) << command << "\n";
  if (!eventually([&] { return confirmations() > before; }, 10s))
    throw std::runtime_error("the broker did not confirm \"" + command + "\": " + read_file(dir_.file("broker.log")));
}

void Pipeline::start_agent(const std::string& config, const std::string& agent_name,
                           const std::vector<std::string>& extra_args) {
  std::ofstream(dir_.file("agent.properties")) << config;
  std::remove(dir_.file("ready").c_str());
  std::vector<std::string> argv{
      agent_program_,      "-f", dir_.file("agent.properties"), "-n", agent_name, "--ready-file", dir_.file("ready"),
      "--status-interval", "1s"};
  if (std::find(extra_args.begin(), extra_args.end(), "--shutdown-timeout") == extra_args.end())
    argv.insert(argv.end(), {"--shutdown-timeout", "20s"});
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  agent_ = std::make_unique<ChildProcess>(argv, dir_.file("agent.log"));
  const std::string ready = wait_for_file(dir_.file("ready"), 20s);
  if (ready.empty()) throw std::runtime_error("the agent did not start: " + agent_log());
  targets_.clear();
  std::istringstream ports(value_of(ready, "source.r1.ports"));
  for (std::string port; ports >> port;) targets_.insert(targets_.end(), {"-t", "127.0.0.1:" + port});
  if (const std::string embedded = value_of(ready, "embedded.bootstrap"); !embedded.empty()) bootstrap_ = embedded;
  if (const std::string port = value_of(ready, "metrics.port"); !port.empty()) metrics_port_ = std::stoi(port);
}

std::vector<uint16_t> Pipeline::agent_ports() const {
  std::vector<uint16_t> ports;
  for (size_t i = 1; i < targets_.size(); i += 2)
    ports.push_back(static_cast<uint16_t>(std::stoi(targets_[i].substr(targets_[i].rfind(':') + 1))));
  return ports;
}

void Pipeline::send_to(const std::vector<uint16_t>& ports) {
  targets_.clear();
  for (uint16_t port : ports) targets_.insert(targets_.end(), {"-t", "127.0.0.1:" + std::to_string(port)});
}

namespace {
// A "Vm...:" line of /proc/PID/status, in kB; -1 if there is none.
long status_kb(pid_t pid, const std::string& field) {
  std::istringstream status(read_file("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(field.size()));
  return -1;
}
}  // namespace

long Pipeline::agent_peak_rss_kb() const { return status_kb(agent_->pid(), "VmHWM:"); }
long Pipeline::agent_rss_kb() const { return status_kb(agent_->pid(), "VmRSS:"); }

std::optional<int> Pipeline::stop_agent(std::chrono::milliseconds timeout) {
  agent_->signal(SIGTERM);
  return agent_->wait(timeout);
}

int Pipeline::send_through_outage(std::chrono::milliseconds after, std::chrono::milliseconds outage,
                                  const std::vector<std::string>& args) {
  TestThread broker_outage([&] {         // control_broker() throws when the broker does not answer
    std::this_thread::sleep_for(after);  // the schedule, not a synchronisation
    control_broker("down");
    std::this_thread::sleep_for(outage);
    control_broker("up");
  });
  const int sent = send(args);
  broker_outage.join();
  return sent;
}

int Pipeline::send(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  std::vector<std::string> argv{bin("sluice-loadgen"), "-q", "--summary-json", dir_.file("sent.json")};
  argv.insert(argv.end(), targets_.begin(), targets_.end());
  argv.insert(argv.end(), args.begin(), args.end());
  // The loadgen's own bound (10 s) is sized for a person at a terminal. A test that names a
  // count means the whole count: on a slow machine (a sanitizer build, acks=all, RELP's
  // windows) it may need longer. Its bound is then a quarter of this call's, and so is a blocked
  // write's after it, so that the loadgen ends by itself (RELP then waits up to 30 s for its last
  // answers) and writes its summary before the call's own bound kills it.
  const auto names = [&](const std::string& short_name, const std::string& long_name) {
    return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
      return arg == short_name || arg == long_name || arg.rfind(long_name + "=", 0) == 0 ||
             (arg.size() > short_name.size() && arg.rfind(short_name, 0) == 0);  // -n5, -d30s
    });
  };
  if (names("-n", "--count") && !names("-d", "--duration")) {
    const auto quarter =
        std::to_string(std::max<long>(1, std::chrono::duration_cast<std::chrono::seconds>(timeout / 4).count())) + "s";
    argv.insert(argv.end(), {"-d", quarter});
    if (!names("--write-timeout", "--write-timeout")) argv.insert(argv.end(), {"--write-timeout", quarter});
  }
  const int code = run(argv, dir_.file("loadgen.log"), timeout);
  if (code != 0)
    std::fprintf(stderr, "sluice-loadgen exited %d:\n%s\nthe agent's log:\n%s\n", code,
                 read_file(dir_.file("loadgen.log")).c_str(), agent_log().c_str());
  return code;
}

int Pipeline::verify(std::string& report, const std::string& bootstrap, const std::vector<std::string>& extra_args) {
  std::remove(dir_.file("verify.log").c_str());
  std::vector<std::string> argv{bin("sluice-loadgen"),
                                "--verify",
                                "--bootstrap",
                                bootstrap.empty() ? bootstrap_ : bootstrap,
                                "--topic",
                                topic_,
                                "--expect",
                                dir_.file("sent.json"),
                                "--idle",
                                "1500ms",
                                "--timeout",
                                "90s"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  const int code = run(argv, dir_.file("verify.log"), 120s);
  report = read_file(dir_.file("verify.log"));
  return code;
}

double Pipeline::metric(const std::string& name) const {
  return prometheus_sum(http_get(metrics_port_, "/metrics"), name);
}

void Pipeline::wait_until_served(std::chrono::milliseconds timeout) const {
  const auto all_served = [&] {
    std::istringstream metrics(http_get(metrics_port_, "/metrics"));
    int sinks = 0, served = 0;
    for (std::string line; std::getline(metrics, line);) {
      if (!line.starts_with("sluice_sink_destination_served{")) continue;
      ++sinks;
      served += line.ends_with(" 1");
    }
    return sinks > 0 && served == sinks;
  };
  if (!eventually(all_served, timeout, std::chrono::milliseconds(100)))
    throw std::runtime_error("the agent's Kafka sinks were not all served after " + std::to_string(timeout.count()) +
                             " ms:\n" + agent_log());
}

bool Pipeline::send_until_stored(uint64_t events, uint64_t stored_total, std::chrono::milliseconds timeout) {
  if (send({"-c", "2", "-n", std::to_string(events), "-d", "30s"}) != 0) return false;
  return eventually([&] { return stored() == stored_total; }, timeout);
}

uint64_t Pipeline::stored() const {
  const std::string out = dir_.file("offsets.log");
  std::remove(out.c_str());
  run({bin("sluice-loadgen"), "--offsets", "--bootstrap", bootstrap_, "--topic", topic_}, out, 30s);
  return std::stoull("0" + read_file(out));
}

}  // namespace sluice::test
