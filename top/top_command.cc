#include "top/top_command.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "top/metrics_fetch.h"
#include "top/top_view.h"

namespace sluice::top {
namespace {

using Clock = std::chrono::steady_clock;

// The terminal in the state top needs (no echo, keys without Enter, the alternate screen, no
// cursor), put back as it was however top ends.
class TerminalMode {
 public:
  TerminalMode() {
    if (tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));  // ISIG stays: Ctrl-C is SIGINT
    raw.c_iflag &= static_cast<tcflag_t>(~IXON);             // Ctrl-S would freeze the screen
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    std::cout << "\x1b[?1049h\x1b[?25l" << std::flush;
  }
  TerminalMode(const TerminalMode&) = delete;
  TerminalMode& operator=(const TerminalMode&) = delete;
  ~TerminalMode() {
    // A new line first: where the alternate screen is not supported the shell's prompt comes below.
    std::cout << "\r\n\x1b[?25h\x1b[?1049l" << std::flush;
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }

 private:
  termios saved_{};
  bool active_ = false;
};

struct TerminalSize {
  size_t columns = 132, rows = 0;  // rows 0: not known, nothing cut
};

TerminalSize terminal_size() {
  winsize size{};
  TerminalSize t;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) {
    if (size.ws_col > 0) t.columns = size.ws_col;
    t.rows = size.ws_row;
  }
  return t;
}

std::string clock_time() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[16];
  std::strftime(buffer, sizeof buffer, "%H:%M:%S", &local);
  return buffer;
}

std::optional<Scrape> scrape(const TopOptions& options, std::string& error) {
  try {
    // A slow or silent agent holds the screen (and q) for 2 s at most.
    const auto timeout = std::clamp(options.interval, std::chrono::milliseconds(500), std::chrono::milliseconds(2000));
    Scrape s{Clock::now(), parse_prometheus_text(fetch_metrics(options.address, timeout))};
    error.clear();
    return s;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::string title(const TopOptions& options, bool interactive) {
  return "sluice top  " + options.address + "  every " + std::to_string(options.interval.count()) + " ms  " +
         clock_time() + (interactive ? "  (q quits)" : "");
}

void print_lines(const std::vector<std::string>& lines, bool full_screen) {
  std::string frame;
  if (full_screen) {
    // From the top left, each line over what was there; no newline after the last, which on the
    // bottom row would scroll the screen; then whatever a longer frame left below is erased.
    frame = "\x1b[H";
    for (size_t i = 0; i < lines.size(); ++i) frame += (i ? "\n" : "") + lines[i] + "\x1b[K";
    frame += "\x1b[J";
  } else {
    for (const std::string& line : lines) frame += line + "\n";
  }
  std::cout << frame << std::flush;
}

// Ctrl-Z as a shell with job control expects it: the terminal given back, then stopped with
// SIGTSTP itself (a stop the kernel discards where no shell could continue top: an orphaned
// process group, e.g. `ssh -t host sluice top`); continued, top takes the terminal again.
void suspend(std::optional<TerminalMode>& terminal) {
  const bool had_terminal = terminal.has_value();
  terminal.reset();
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTSTP);
  ::raise(SIGTSTP);                              // pending while blocked
  pthread_sigmask(SIG_UNBLOCK, &stop, nullptr);  // delivered here: stopped until SIGCONT, or discarded
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  if (had_terminal) terminal.emplace();
}

}  // namespace

int run_top(const TopOptions& options) {
  std::string error;
  if (options.once) {
    std::optional<Scrape> first = scrape(options, error);
    if (!first) {
      std::cerr << "sluice top: " << error << "\n";
      return 1;
    }
    const Clock::time_point next = first->at + options.interval;
    while (Clock::now() < next) ::poll(nullptr, 0, 10);  // the interval, waited to its end
    std::optional<Scrape> second = scrape(options, error);
    if (!second) {
      std::cerr << "sluice top: " << error << "\n";
      return 1;
    }
    print_lines(render_view(compute_view(*first, *second), title(options, false)), false);
    return 0;
  }

  // Signals as file descriptors, so that one poll() waits for a key, a signal or the next refresh.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGQUIT);  // Ctrl-\ quits too, with the terminal given back
  sigaddset(&signals, SIGHUP);   // and a hangup (kill -HUP; a closed terminal is seen on stdin too)
  sigaddset(&signals, SIGWINCH);
  const bool interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  // Ctrl-Z is top's to handle only on a terminal, and only if it would stop top at all (not when
  // whoever started top set SIGTSTP to be ignored).
  struct sigaction tstp {};
  if (interactive && sigaction(SIGTSTP, nullptr, &tstp) == 0 && tstp.sa_handler == SIG_DFL)
    sigaddset(&signals, SIGTSTP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const int signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);
  std::optional<TerminalMode> terminal;
  if (interactive) terminal.emplace();

  std::optional<Scrape> previous;
  std::vector<std::string> lines;  // the last view, at full width
  const auto draw = [&] {
    if (!interactive) return print_lines(lines, false);
    const TerminalSize size = terminal_size();
    print_lines(fit_to_screen(lines, size.columns, size.rows), true);
  };
  Clock::time_point next_refresh = Clock::now();
  bool running = true;
  while (running) {
    if (Clock::now() >= next_refresh) {
      std::optional<Scrape> now = scrape(options, error);
      if (now) {
        lines = render_view(previous ? compute_view(*previous, *now) : compute_view(*now, *now),
                            title(options, interactive));
        previous = std::move(now);
      } else {
        lines = {title(options, interactive), "", "cannot reach the agent: " + error,
                 "asking again every " + std::to_string(options.interval.count()) + " ms"};
        previous.reset();  // rates start afresh once it answers again
      }
      draw();
      next_refresh = Clock::now() + options.interval;
    }
    // Keys only on a terminal: a closed or finished stdin otherwise says nothing about quitting.
    pollfd fds[2] = {{signal_fd, POLLIN, 0}, {interactive ? STDIN_FILENO : -1, POLLIN, 0}};
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_refresh - Clock::now()).count();
    if (::poll(fds, 2, static_cast<int>(std::max<long long>(wait, 0))) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info{};
      if (::read(signal_fd, &info, sizeof info) == sizeof info) {
        if (info.ssi_signo == SIGWINCH) {
          if (interactive) draw();  // the same view at the new size (a scrape now would shorten the rates' interval)
        } else if (info.ssi_signo == SIGTSTP) {
          suspend(terminal);
          draw();  // the last view at once (the size may have changed meanwhile), fresh rates at the next refresh
        } else {
          running = false;
        }
      }
    }
    if (fds[1].revents & POLLIN) {
      char key = 0;
      if (::read(STDIN_FILENO, &key, 1) == 1 && (key == 'q' || key == 'Q')) running = false;
    }
    if (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) running = false;  // the terminal went away
  }
  terminal.reset();
  if (signal_fd >= 0) ::close(signal_fd);
  return 0;
}

}  // namespace sluice::top
