// sluice: syslog over TCP in, Kafka out. Usage mirrors `flume-ng agent -f FILE -n AGENT`.

#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "agent/agent.h"
#include "agent/api/property_values.h"
#include "agent/component_registry.h"
#include "agent/config/config_file.h"
#include "agent/http_endpoint.h"
#include "agent/systemd_notify.h"
#include "tools/man_page.h"
#include "top/top_command.h"

namespace {

using namespace sluice;

void write_ready_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
  }
  std::rename(tmp.c_str(), path.c_str());  // readers never see half a file
}

std::chrono::milliseconds duration_option(const std::string& text, const std::string& option) {
  return config::parse_duration(text, config::ValueContext{option, {"command line", 0}}, {.min = 0, .max = 86'400'000});
}

// systemd's journal reads "<N>" syslog priorities at the start of each stderr line.
class JournalPriority : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static constexpr const char* kPriority[] = {"<7>", "<7>", "<6>", "<4>", "<3>", "<2>", "<6>"};
    const char* p = kPriority[std::min<int>(msg.level, 6)];
    dest.append(p, p + 3);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JournalPriority>(); }
};

void set_up_logging(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
  if (std::getenv("JOURNAL_STREAM")) {
    // Under systemd: the journal adds the time; priorities let `journalctl -p` filter.
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JournalPriority>('*').set_pattern("%*%v");
    spdlog::set_formatter(std::move(formatter));
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
}

// "flume.monitoring.port=N" (as flume-ng's -D) → "127.0.0.1:N".
std::string metrics_address_from_defines(const std::vector<std::string>& defines) {
  std::string address;
  for (const std::string& d : defines) {
    const size_t eq = d.find('=');
    const std::string key = d.substr(0, eq), value = eq == std::string::npos ? "" : d.substr(eq + 1);
    if (key == "flume.monitoring.port")
      address = "127.0.0.1:" + value;
    else if (key == "flume.monitoring.type" && value != "http")
      throw config::ConfigError("-D" + d + ": only flume.monitoring.type=http is supported");
    else if (key != "flume.monitoring.type")
      throw config::ConfigError("-D" + d +
                                ": unknown (supported: flume.monitoring.type=http, flume.monitoring.port=N)");
  }
  return address;
}

// Each connection is a file descriptor: take all the kernel allows, and say when that is little.
void raise_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  if (limit.rlim_cur < 65536)
    spdlog::warn(
        "file descriptor limit is {}: at most about that many connections; raise it (LimitNOFILE=2000000 in "
        "sluice.service, ulimit -n, fs.nr_open in sysctl/99-sluice.conf)",
        limit.rlim_cur);
}

// What a reload needs: the file and agent name it re-reads, the drain time for what it replaces,
// and how to tell the world (the ready file).
struct ReloadContext {
  std::string file, agent_name;
  std::chrono::milliseconds drain{0};
  std::chrono::milliseconds watch{0};  // --watch-config: poll the file this often (0: only SIGHUP)
  std::function<void()> write_ready;
};

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Re-reads the file and hands it to Agent::reload; systemd hears RELOADING=1 ... READY=1 (with
// the monotonic time systemd 253's Type=notify-reload asks for).
void reload(Agent& agent, const ReloadContext& context) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  notify_systemd("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(static_cast<uint64_t>(now.tv_sec) * 1'000'000 +
                                                                 static_cast<uint64_t>(now.tv_nsec) / 1000));
  spdlog::info("reloading {}", context.file);
  // A reload may drain for seconds: systemd's watchdog is fed meanwhile.
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::thread feeder;
  if (const auto period = systemd_watchdog_interval() / 2; period.count())
    feeder = std::thread([&, period] {
      std::unique_lock lock(mutex);
      while (!done_cv.wait_for(lock, period, [&] { return done; })) notify_systemd("WATCHDOG=1");
    });
  config::AgentConfig next;
  bool parsed = false;
  try {
    next = config::assemble(config::load_config_file(context.file), context.agent_name, context.file);
    parsed = true;
  } catch (const config::ConfigError& e) {
    spdlog::error("reload refused: {}; the running configuration stays", e.what());
    agent.count_reload(ReloadOutcome::refused);
  }
  if (parsed) {
    try {
      agent.reload(next, context.drain);
    } catch (const std::exception& e) {  // a component failing in a way reload did not foresee
      spdlog::error("reload failed: {}; the agent goes on with what runs", e.what());
      agent.count_reload(ReloadOutcome::failed);
    }
  }
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  done_cv.notify_all();
  if (feeder.joinable()) feeder.join();
  if (context.write_ready) context.write_ready();
  notify_systemd("READY=1");
}

// Waits for SIGINT/SIGTERM, printing a status line every `interval` and keeping systemd's
// watchdog fed (at half its period) if the unit has one. SIGHUP reloads the configuration (and
// the sources' credentials); with --watch-config so does a change of the file's contents.
void run_until_signal(Agent& agent, std::chrono::milliseconds interval, const ReloadContext& context) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  const std::chrono::milliseconds watchdog = systemd_watchdog_interval() / 2;
  std::chrono::milliseconds wake = interval;
  for (const auto period : {watchdog, context.watch})
    if (period.count() && (!wake.count() || period < wake)) wake = period;
  AgentTotals last = agent.totals();
  auto last_time = Clock::now(), last_watch = Clock::now();
  std::string watched = context.watch.count() ? file_text(context.file) : "";
  while (true) {
    timespec timeout{static_cast<time_t>(wake.count() / 1000), static_cast<long>(wake.count() % 1000) * 1'000'000};
    const int sig = sigtimedwait(&signals, nullptr, wake.count() ? &timeout : nullptr);
    if (sig == SIGINT || sig == SIGTERM) {
      spdlog::info("received {}", sig == SIGINT ? "SIGINT" : "SIGTERM");
      notify_systemd("STOPPING=1");
      return;
    }
    if (watchdog.count()) notify_systemd("WATCHDOG=1");
    agent.settle_retired();
    if (sig == SIGHUP) {
      spdlog::info("received SIGHUP");
      // What this reload reads is what --watch-config has seen: taken before, so that an edit made
      // while the reload runs is still a change afterwards, and applied by the next look.
      if (context.watch.count()) watched = file_text(context.file);
      reload(agent, context);
      continue;
    }
    const auto now_time = Clock::now();
    if (context.watch.count() && now_time - last_watch >= context.watch) {
      last_watch = now_time;
      if (std::string text = file_text(context.file); text != watched) {
        spdlog::info("{} changed (--watch-config)", context.file);
        watched = std::move(text);
        reload(agent, context);
      }
    }
    if (!interval.count() || now_time - last_time < interval) continue;
    const AgentTotals now = agent.totals();
    const double seconds = std::chrono::duration<double>(now_time - last_time).count();
    // Enough to see which stage saturates: sources blocked on a full channel, or Kafka's queue growing.
    const std::string status = fmt::format(
        "in {:.0f} ev/s, out {:.0f} ev/s, channel {:.1f}% full ({} events), sources blocked {:.0f}%, "
        "kafka queue {} msgs, {} failed so far",
        (now.events_in - last.events_in) / seconds, (now.events_out - last.events_out) / seconds,
        now.channel_capacity ? 100.0 * now.channel_held / now.channel_capacity : 0.0, now.channel_held,
        100.0 * std::chrono::duration<double>(now.put_blocked - last.put_blocked).count() / seconds, now.sinks_queued,
        now.events_failed);
    spdlog::info("status: {}", status);
    notify_systemd("STATUS=" + status);
    last = now;
    last_time = now_time;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sluice " SLUICE_VERSION ": syslog over TCP into Apache Kafka, configured like Flume"};
  std::string file, agent_name = "agent", ready_file, shutdown_timeout = "30s", status_interval = "10s";
  std::string log_level = "info", metrics_address, watch_interval = "30s";
  bool watch_config = false;
  std::vector<std::string> defines;
  bool check = false, print_reference = false;
  app.add_option("-f,--conf-file", file, "Configuration file: Flume properties, or YAML (.yaml/.yml)");
  app.add_option("-n,--name", agent_name, "Agent name: the first part of every key (as flume-ng -n)")
      ->capture_default_str();
  app.add_flag("--check", check,
               "Validate the configuration and exit 0 (valid) or 1; opens no socket, contacts no Kafka");
  app.add_option("--shutdown-timeout", shutdown_timeout,
                 "On SIGTERM/SIGINT: how long to drain the channels into Kafka before giving up (e.g. 30s)")
      ->capture_default_str();
  app.add_option("--status-interval", status_interval, "Log a throughput/fill status line this often; 0 disables")
      ->capture_default_str();
  app.add_option("--ready-file", ready_file,
                 "Once listening, write bound ports and the embedded Kafka's bootstrap here (key=value lines)");
  app.add_flag("--watch-config", watch_config,
               "Reload when the file's contents change (checked every --watch-interval), as Flume polls its file; "
               "SIGHUP (systemctl reload) reloads in any case");
  app.add_option("--watch-interval", watch_interval, "How often --watch-config looks at the file")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();
  app.add_option("--metrics", metrics_address,
                 "Serve /metrics (Prometheus) and /metrics.json (Flume JSON) on host:port, e.g. 127.0.0.1:34545 "
                 "(port 0: any); overrides <agent>.monitoring.address; 'none' disables");
  app.add_option("-D", defines, "flume-ng style: -Dflume.monitoring.type=http -Dflume.monitoring.port=34545");
  app.add_flag("--print-config-reference", print_reference, "Print every component's properties (Markdown) and exit");
  app.set_version_flag("-V,--version", "sluice " SLUICE_VERSION);
  bool print_man_page = false;
  app.add_flag("--print-man-page", print_man_page, "Print this manual as roff (man sluice)")->group("");
  CLI::App* config_command = app.add_subcommand("config", "Configuration tools");
  std::string convert_file;
  config_command->add_subcommand("convert", "Print FILE in the other format (properties <-> YAML)")
      ->add_option("FILE", convert_file, "A .properties or .yaml file")
      ->required();
  config_command->require_subcommand(1);
  CLI::App* top_command =
      app.add_subcommand("top", "Show a running agent's metrics in the terminal, refreshed each interval (q quits)");
  top::TopOptions top_options;
  std::string top_interval = "1s";
  top_command->add_option("--metrics", top_options.address, "The agent's metrics endpoint: host:port (its --metrics)")
      ->capture_default_str();
  top_command->add_option("--interval", top_interval, "How often to refresh (e.g. 1s, 500ms)")->capture_default_str();
  top_command->add_flag("--once", top_options.once,
                        "Print one view (two readings an interval apart) as plain text and exit; 1 if unreachable");
  CLI11_PARSE(app, argc, argv);
  if (top_command->parsed()) {
    try {
      top_options.interval = duration_option(top_interval, "--interval");
      if (top_options.interval.count() < 100) throw config::ConfigError("--interval: at least 100ms");
    } catch (const config::ConfigError& e) {
      std::cerr << "sluice top: " << e.what() << "\n";
      return 1;
    }
    return top::run_top(top_options);
  }
  if (!convert_file.empty()) {
    try {
      const config::FlatConfig flat = config::load_config_file(convert_file);
      std::cout << (config::format_of(convert_file) == config::FileFormat::yaml ? config::to_properties(flat)
                                                                                : config::to_yaml(flat));
      return 0;
    } catch (const config::ConfigError& e) {
      std::cerr << "sluice: " << e.what() << "\n";
      return 1;
    }
  }

  if (print_man_page) {
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
          "sluice-loadgen(1), sluice-kafka-mock(1), systemctl(1), kcat(1); the README in "
          "/usr/share/doc/sluice."}});
    return 0;
  }
  set_up_logging(log_level);
  if (print_reference) {
    std::cout << config_reference();
    return 0;
  }
  if (file.empty()) {
    std::cerr << "sluice: -f FILE is required (see --help)\n";
    return 1;
  }

  // Block the signals before any thread starts, so that only sigtimedwait() receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    const auto drain = duration_option(shutdown_timeout, "--shutdown-timeout");
    const auto interval = duration_option(status_interval, "--status-interval");
    const auto watch =
        watch_config ? duration_option(watch_interval, "--watch-interval") : std::chrono::milliseconds(0);
    if (watch_config && watch.count() < 100) throw config::ConfigError("--watch-interval: at least 100ms");
    const config::AgentConfig model = config::assemble(config::load_config_file(file), agent_name, file);
    Agent agent(model);
    if (check) {
      std::cout << file << ": configuration of agent '" << agent_name << "' is valid (" << agent.source_count()
                << " source(s), " << agent.channel_count() << " channel(s), " << agent.sink_count() << " sink(s))\n"
                << "memory bound: " << agent.memory_bound().describe() << "\n";
      return 0;
    }
    std::string address = metrics_address_from_defines(defines);
    if (!metrics_address.empty()) address = metrics_address;
    if (address.empty()) address = model.monitoring_address.value;
    if (address == "none") address.clear();
    raise_file_limit();
    spdlog::info("memory bound: {}", agent.memory_bound().describe());
    agent.start();
    std::unique_ptr<MetricsEndpoint> metrics;
    if (!address.empty()) {
      metrics = std::make_unique<MetricsEndpoint>(address, agent);
      spdlog::info("metrics: http://{}/metrics and /metrics.json (port {})", address, metrics->port());
    }
    const auto write_ready = [&] {
      if (!ready_file.empty())
        write_ready_file(
            ready_file, agent.ready_info() + (metrics ? "metrics.port=" + std::to_string(metrics->port()) + "\n" : ""));
    };
    notify_systemd("READY=1");
    write_ready();
    const ReloadContext context{
        .file = file, .agent_name = agent_name, .drain = drain, .watch = watch, .write_ready = write_ready};
    run_until_signal(agent, interval, context);
    agent.stop(drain);
    metrics.reset();
    return 0;
  } catch (const config::ConfigError& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "sluice: fatal: " << e.what() << "\n";
    return 2;
  }
}
