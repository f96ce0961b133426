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
    std::cout << "\x1b[?25h\x1b[?1049l" << std::flush;
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }

 private:
  termios saved_{};
  bool active_ = false;
};

size_t terminal_width() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 132;
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
  std::string frame = full_screen ? "\x1b[H" : "";
  for (const std::string& line : lines) frame += line + (full_screen ? "\x1b[K\n" : "\n");
  if (full_screen) frame += "\x1b[J";  // what a longer frame before left below
  std::cout << frame << std::flush;
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
    print_lines(render_view(compute_view(*first, *second), title(options, false), 1000), false);
    return 0;
  }

  // Signals as file descriptors, so that one poll() waits for a key, a signal or the next refresh.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGWINCH);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const int signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);
  const bool interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  std::optional<TerminalMode> terminal;
  if (interactive) terminal.emplace();

  std::optional<Scrape> previous;
  std::vector<std::string> lines;
  Clock::time_point next_refresh = Clock::now();
  bool running = true;
  while (running) {
    if (Clock::now() >= next_refresh) {
      std::optional<Scrape> now = scrape(options, error);
      if (now) {
        lines = render_view(previous ? compute_view(*previous, *now) : compute_view(*now, *now),
                            title(options, interactive), interactive ? terminal_width() : 1000);
        previous = std::move(now);
      } else {
        lines = {title(options, interactive), "", "cannot reach the agent: " + error,
                 "asking again every " + std::to_string(options.interval.count()) + " ms"};
        previous.reset();  // rates start afresh once it answers again
      }
      print_lines(lines, interactive);
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
          next_refresh = Clock::now();  // redrawn at the new width (and scraped again: rates stay right)
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
