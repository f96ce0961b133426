// `sluice top` against a running agent: in a real terminal (tmux: start it, read the screen,
// quit with q, the terminal given back), as plain text with --once, and against an agent that
// is not there. The tmux server is the test's own (a socket in its directory), ended by PID.

#include <signal.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <regex>

#include "tests/support/eventually.h"
#include "tests/support/pipeline.h"
#include "tests/support/test_thread.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

class Tmux {
 public:
  // A tmux server of the test's own, its socket `name`.sock in `dir`, with one session.
  Tmux(const TempDir& dir, std::string name) : dir_(dir), name_(std::move(name)), socket_(dir.file(name_ + ".sock")) {}
  Tmux(const Tmux&) = delete;
  Tmux& operator=(const Tmux&) = delete;
  ~Tmux() {
    if (!started_) return;
    tmux({"kill-server"});
    if (server_pid_ > 0 && !eventually([&] { return ::kill(server_pid_, 0) != 0; }, 5s)) ::kill(server_pid_, SIGKILL);
  }

  // A session of `columns` x `rows` running `command`.
  void start(int columns, int rows, const std::string& command) {
    REQUIRE(tmux({"-f", "/dev/null", "new-session", "-d", "-s", "top", "-x", std::to_string(columns), "-y",
                  std::to_string(rows), command}) == 0);
    started_ = true;
    const std::string pid = output({"display-message", "-p", "-t", "top", "#{pid}"});
    REQUIRE(!pid.empty());
    server_pid_ = std::stoi(pid);
  }
  std::string screen() { return output({"capture-pane", "-p", "-t", "top"}); }
  // The pane's state, for a failure's message.
  std::string pane() {
    return output({"display-message", "-p", "-t", "top",
                   "dead #{pane_dead} status #{pane_dead_status} alternate screen #{alternate_on}"});
  }
  // Whether the pane shows the alternate screen (top's while it runs).
  bool alternate_screen() { return output({"display-message", "-p", "-t", "top", "#{alternate_on}"}) == "1"; }
  bool resize(int columns, int rows) {
    return tmux({"resize-window", "-t", "top", "-x", std::to_string(columns), "-y", std::to_string(rows)}) == 0;
  }
  // False if tmux refused (e.g. the pane's command has ended).
  bool keys(const std::string& keys) { return tmux({"send-keys", "-t", "top", keys}) == 0; }
  // A line typed into the pane's shell, then Enter.
  bool type(const std::string& line) {
    return tmux({"send-keys", "-t", "top", "-l", line}) == 0 && tmux({"send-keys", "-t", "top", "Enter"}) == 0;
  }

 private:
  int tmux(std::vector<std::string> args, const std::string& out = "") {
    args.insert(args.begin(), {"/usr/bin/tmux", "-S", socket_});
    return run(args, out.empty() ? dir_.file(name_ + ".log") : out, 10s);
  }
  std::string output(const std::vector<std::string>& args) {
    const std::string file = dir_.file(name_ + "-" + std::to_string(++calls_) + ".out");
    tmux(args, file);
    std::string text = read_file(file);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }

  const TempDir& dir_;
  const std::string name_;
  const std::string socket_;
  bool started_ = false;
  pid_t server_pid_ = -1;
  int calls_ = 0;
};

// The events/s of the screen's "in N events/s" line, 0 if there is none yet.
double events_in(const std::string& screen) {
  std::smatch m;
  if (!std::regex_search(screen, m, std::regex("in ([0-9,]+) events/s"))) return 0;
  return std::stod(std::regex_replace(m[1].str(), std::regex(","), ""));
}

}  // namespace

TEST_CASE("sluice top in a terminal shows the agent's sources, channel and sinks with rates and latency, and q quits",
          "[e2e][top]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), {"acks = all", "linger.ms = 5"}), "t", {"--metrics", "127.0.0.1:0"});
  std::atomic<int> sent{-1};
  // Longer than the screen needs to show it all, even on a loaded machine.
  TestThread sender([&] { sent = p.send({"-c", "2", "-r", "20000", "-d", "15s"}); });
  Tmux tmux(p.dir(), "top");
  // top's status goes to a file, and the shell stays (until the tmux server is ended): a shell
  // that ended would have tmux reap the pane, which may scroll or cut off top's last output.
  const std::string status_file = p.dir().file("top.status");
  tmux.start(150, 45,
             bin("sluice") + " top --metrics 127.0.0.1:" + std::to_string(p.metrics_port()) + " --interval 500ms 2>" +
                 p.dir().file("top.err") + "; echo $? >" + status_file + "; echo 'top has exited'; exec sleep 120");
  {
    std::string screen;
    // Refreshed while events flow: the rates show them, the latency of the events committed.
    REQUIRE(eventually(
        [&] {
          screen = tmux.screen();
          // Every sink's latency p99 and its broker up (librdkafka's statistics come each second).
          if (events_in(screen) <= 0) return false;
          for (int k = 0; k < 10; ++k)
            if (!std::regex_search(screen, std::regex("\nk" + std::to_string(k) + " .* 1/1 .* [0-9]+\\.[0-9]\\s*\n")))
              return false;
          return true;
        },
        20s));
    INFO(screen);
    CHECK_THAT(screen, Catch::Contains("sluice top  127.0.0.1:") && Catch::Contains("(q quits)"));
    CHECK_THAT(screen, Catch::Contains("SOURCES") && Catch::Contains("CHANNELS") && Catch::Contains("SINKS"));
    CHECK(std::regex_search(screen, std::regex("\nr1 +[0-9,]+ +[0-9.]+ +2\\s")));  // two connections
    CHECK(std::regex_search(screen, std::regex("\nc1 +[0-9,]+ +60,000 ")));
    CHECK_THAT(screen, Catch::Contains("FAILURES  none counted"));
  }
  // Ctrl-Z where no shell could continue top (sh -c: an orphaned process group): ignored, as the
  // kernel ignores it for programs that do not handle it; top still answers q below.
  REQUIRE(tmux.keys("C-z"));
  // q: it ends with status 0 and gives the terminal back (the alternate screen it drew on is gone).
  REQUIRE(tmux.keys("q"));
  const std::string status = wait_for_file(status_file, 10s);
  INFO(tmux.pane() << "\nscreen:\n" << tmux.screen() << "\nstderr:\n" << read_file(p.dir().file("top.err")));
  CHECK(status == "0\n");
  CHECK(eventually([&] { return tmux.screen().find("top has exited") != std::string::npos; }, 5s));
  CHECK_THAT(tmux.screen(), !Catch::Contains("SOURCES"));
  sender.join();
  CHECK(sent == 0);
}

TEST_CASE(
    "sluice top follows its terminal: redrawn at once when resized, Ctrl-Z gives the shell its terminal, fg takes it again",
    "[e2e][top]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), {"acks = 1"}), "t", {"--metrics", "127.0.0.1:0"});
  Tmux shell(p.dir(), "shell");
  // Job control; no history written; a prompt of its own to wait for (a screen's trailing blanks are not captured).
  shell.start(150, 45, "env HISTFILE= PS1='shell> ' bash --norc --noprofile -i");
  REQUIRE(eventually([&] { return shell.screen().find("shell>") != std::string::npos; }, 10s));
  // A minute between refreshes: whatever is redrawn sooner is top answering its terminal.
  REQUIRE(
      shell.type(bin("sluice") + " top --metrics 127.0.0.1:" + std::to_string(p.metrics_port()) + " --interval 60s"));
  // Waits for the pane to show `what` (screen text, and whether it is top's alternate screen);
  // a failure shows the screen as it last was.
  const auto shows = [&](const std::string& what, bool alternate) {
    std::string screen;
    const bool seen = eventually(
        [&] {
          screen = shell.screen();
          return shell.alternate_screen() == alternate && screen.find(what) != std::string::npos;
        },
        10s);
    if (!seen) FAIL_CHECK("waited 10 s for '" << what << "', alternate screen " << alternate << ", on:\n" << screen);
    return seen ? screen : "";
  };
  REQUIRE(!shows("rates after the next refresh", true).empty());
  // Smaller (SIGWINCH): the same view cut to the width, and the rows that do not fit counted.
  REQUIRE(shell.resize(90, 20));
  const std::string smaller = shows("more lines (a taller terminal shows them)", true);
  CHECK_THAT(smaller, Catch::Contains("SINKS") && !Catch::Contains("lat p99 ms"));
  // Ctrl-Z: the shell's screen and prompt back, the job stopped; fg: top's view again.
  REQUIRE(shell.keys("C-z"));
  shows("Stopped", false);
  REQUIRE(shell.type("fg"));
  shows("SOURCES", true);
  REQUIRE(shell.keys("q"));
  REQUIRE(eventually([&] { return !shell.alternate_screen(); }, 10s));
  REQUIRE(shell.type("echo \"top exited with $?\""));
  shows("top exited with 0", false);
}

TEST_CASE("sluice top --once prints one plain view, and says so with status 1 when the agent is not there",
          "[e2e][top]") {
  Pipeline p;
  p.start_broker();
  p.start_agent(ten_sink_config(p.bootstrap(), {"acks = 1"}), "t", {"--metrics", "127.0.0.1:0"});
  REQUIRE(p.send({"-c", "2", "-n", "10000"}) == 0);
  REQUIRE(eventually([&] { return p.stored() == 10000; }, 30s));
  const std::string address = "127.0.0.1:" + std::to_string(p.metrics_port());
  REQUIRE(run({bin("sluice"), "top", "--once", "--interval", "200ms", "--metrics", address}, p.dir().file("once.txt"),
              20s) == 0);
  const std::string view = read_file(p.dir().file("once.txt"));
  INFO(view);
  CHECK_THAT(view, Catch::Contains("sluice top  " + address) && !Catch::Contains("(q quits)"));
  CHECK_THAT(view, !Catch::Contains("\x1b["));                            // plain text: no terminal codes
  CHECK(std::regex_search(view, std::regex("\nc1 +0 +60,000 +0\\.0 ")));  // drained: empty
  CHECK_THAT(view, Catch::Contains("\nk0 "));

  REQUIRE(p.stop_agent(30s) == 0);
  CHECK(run({bin("sluice"), "top", "--once", "--metrics", address}, p.dir().file("gone.txt"), 20s) == 1);
  CHECK_THAT(read_file(p.dir().file("gone.txt")),
             Catch::Contains("sluice top: cannot read http://" + address + "/metrics: "));
  CHECK(run({bin("sluice"), "top", "--interval", "10ms"}, p.dir().file("interval.txt"), 20s) == 1);
  CHECK_THAT(read_file(p.dir().file("interval.txt")), Catch::Contains("--interval: at least 100ms"));
}
