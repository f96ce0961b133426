// `sluice -f FILE`: the agent runs until SIGTERM/SIGINT, reloads on SIGHUP (and, with
// --watch-config, when its file changes), tells systemd how it goes, and writes its account.

#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include "agent/agent.h"
#include "agent/api/property_values.h"
#include "agent/cli/commands.h"
#include "agent/component_registry.h"
#include "agent/config/config_file.h"
#include "agent/http_endpoint.h"
#include "agent/systemd_notify.h"

namespace sluice::cli {
namespace {

void write_ready_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
  }
  std::rename(tmp.c_str(), path.c_str());  // readers never see half a file
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

// Event batches are a megabyte or two each, made by the sources' threads and freed by whichever
// thread polls librdkafka: glibc's default gives such memory back to the kernel once a few
// megabytes of it are free (its trim threshold follows the largest block freed, about twice a
// batch), and every new batch then faults fresh pages in — the kernel zeroing them was 2.3% of the
// agent's CPU into a real Kafka (docs/benchmarks.md, "Where the time goes"). Blocks up to 32 MiB
// come from the heap, and up to 64 MiB of free heap is kept before any goes back: peak RSS rose
// from 164 to about 236 MB in that benchmark, well inside the memory bound. A GLIBC_TUNABLES that
// sets either threshold is the operator's choice and is left alone.
void keep_freed_memory() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables &&
      (std::strstr(tunables, "glibc.malloc.trim_threshold") || std::strstr(tunables, "glibc.malloc.mmap_threshold")))
    return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
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

std::chrono::milliseconds duration_option(const std::string& text, const std::string& option) {
  return config::parse_duration(text, config::ValueContext{option, {"command line", 0}}, {.min = 0, .max = 86'400'000});
}

void add_run_options(CLI::App& app, RunOptions& o) {
  app.add_option("-f,--conf-file", o.file, "Configuration file: Flume properties, or YAML (.yaml/.yml)");
  app.add_option("-n,--name", o.agent_name, "Agent name: the first part of every key (as flume-ng -n)")
      ->capture_default_str();
  app.add_flag("--check", o.check,
               "Validate the configuration and exit 0 (valid) or 1, as a start reads it: config filters are applied "
               "(an external filter's command runs); opens no socket, contacts no Kafka");
  app.add_option("--shutdown-timeout", o.shutdown_timeout,
                 "On SIGTERM/SIGINT: how long to drain the channels into Kafka before giving up (e.g. 30s)")
      ->capture_default_str();
  app.add_option("--status-interval", o.status_interval, "Log a throughput/fill status line this often; 0 disables")
      ->capture_default_str();
  app.add_option("--ready-file", o.ready_file,
                 "Once listening, write bound ports and the embedded Kafka's bootstrap here (key=value lines)");
  app.add_flag("--watch-config", o.watch_config,
               "Reload when the file's contents change (checked every --watch-interval), as Flume polls its file; "
               "SIGHUP (systemctl reload) reloads in any case");
  app.add_option("--watch-interval", o.watch_interval, "How often --watch-config looks at the file")
      ->capture_default_str();
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error")->capture_default_str();
  app.add_option("--metrics", o.metrics_address,
                 "Serve /metrics (Prometheus) and /metrics.json (Flume JSON) on host:port, e.g. 127.0.0.1:34545 "
                 "(port 0: any); overrides <agent>.monitoring.address; 'none' disables");
  app.add_option("-D", o.defines, "flume-ng style: -Dflume.monitoring.type=http -Dflume.monitoring.port=34545");
  app.add_flag("--print-config-reference", o.print_reference, "Print every component's properties (Markdown) and exit");
}

int run_agent(const RunOptions& o) {
  set_up_logging(o.log_level);
  if (o.print_reference) {
    std::cout << config_reference();
    return 0;
  }
  if (o.file.empty()) {
    std::cerr << "sluice: -f FILE is required (see --help)\n";
    return 1;
  }
  try {
    // The options first: --check refuses a bad one as a run would.
    const auto drain = duration_option(o.shutdown_timeout, "--shutdown-timeout");
    const auto interval = duration_option(o.status_interval, "--status-interval");
    const auto watch =
        o.watch_config ? duration_option(o.watch_interval, "--watch-interval") : std::chrono::milliseconds(0);
    if (o.watch_config && watch.count() < 100) throw config::ConfigError("--watch-interval: at least 100ms");
    if (o.check) return check_configuration(o);
    // Block the signals before any thread starts, so that only sigtimedwait() receives them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    const config::AgentConfig model = config::assemble(config::load_config_file(o.file), o.agent_name, o.file);
    Agent agent(model);
    std::string address = metrics_address_from_defines(o.defines);
    if (!o.metrics_address.empty()) address = o.metrics_address;
    if (address.empty()) address = model.monitoring_address.value;
    if (address == "none") address.clear();
    raise_file_limit();
    keep_freed_memory();
    spdlog::info("memory bound: {}", agent.memory_bound().describe());
    agent.start();
    std::unique_ptr<MetricsEndpoint> metrics;
    if (!address.empty()) {
      metrics = std::make_unique<MetricsEndpoint>(address, agent);
      spdlog::info("metrics: http://{}/metrics and /metrics.json (port {})", address, metrics->port());
    }
    const auto write_ready = [&] {
      if (!o.ready_file.empty())
        write_ready_file(o.ready_file, agent.ready_info() +
                                           (metrics ? "metrics.port=" + std::to_string(metrics->port()) + "\n" : ""));
    };
    notify_systemd("READY=1");
    write_ready();
    const ReloadContext context{
        .file = o.file, .agent_name = o.agent_name, .drain = drain, .watch = watch, .write_ready = write_ready};
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

}  // namespace sluice::cli
