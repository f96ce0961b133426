#include "loadgen/relp_sender.h"

#include "loadgen/acknowledged.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace sluice::loadgen {
namespace {

using Clock = std::chrono::steady_clock;

struct Unanswered {
  uint32_t txnr;
  uint64_t sequence;
  Clock::time_point written;
  std::string message;
};

std::string relp_frame(uint32_t txnr, std::string_view command, std::string_view data) {
  std::string out = std::to_string(txnr) + ' ' + std::string(command) + ' ' + std::to_string(data.size());
  if (!data.empty()) (out += ' ') += data;
  return out += '\n';
}

// One response at the start of `in`: its length, 0 if not whole yet, -1 if not RELP.
long parse_response(std::string_view in, uint32_t& txnr, std::string_view& command, std::string_view& data) {
  const size_t first_space = in.find(' ');
  if (first_space == std::string_view::npos) return in.size() > 10 ? -1 : 0;
  const size_t second_space = in.find(' ', first_space + 1);
  if (second_space == std::string_view::npos) return in.size() > 64 ? -1 : 0;
  size_t at = second_space + 1;
  size_t length = 0;
  while (at < in.size() && in[at] >= '0' && in[at] <= '9') length = length * 10 + static_cast<size_t>(in[at++] - '0');
  if (at == in.size()) return 0;
  txnr = static_cast<uint32_t>(std::strtoul(std::string(in.substr(0, first_space)).c_str(), nullptr, 10));
  command = in.substr(first_space + 1, second_space - first_space - 1);
  if (length == 0) {
    if (in[at] != '\n') return -1;
    data = {};
    return static_cast<long>(at + 1);
  }
  if (in[at] != ' ') return -1;
  if (in.size() < at + 1 + length + 1) return 0;
  data = in.substr(at + 1, length);
  if (in[at + 1 + length] != '\n') return -1;
  return static_cast<long>(at + 1 + length + 1);
}

class RelpConnection {
 public:
  RelpConnection(const SendOptions& options, uint32_t id, Target target)
      : options_(options), target_(std::move(target)), writer_(options.format, id) {
    result.id = id;
    result.target = target_.host + ":" + std::to_string(target_.port);
  }
  ~RelpConnection() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Sends until `count` events or `until`, at `rate` per second (0: as the window allows).
  void run(uint64_t count, double rate, Clock::time_point start, Clock::time_point until) {
    give_up_at_ = until + options_.write_timeout;
    while (Clock::now() < until && (count == 0 || result.sent < count)) {
      if (fd_ < 0 && !open_session(until)) continue;
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      uint64_t due = rate > 0 ? static_cast<uint64_t>(rate * elapsed) + 1 : UINT64_MAX;
      if (count) due = std::min(due, count);
      const size_t room = static_cast<size_t>(options_.relp_window) - unanswered_.size();
      const auto n = static_cast<size_t>(std::min<uint64_t>(room, due > result.sent ? due - result.sent : 0));
      if (n > 0 && !send_new(n)) continue;
      read_responses(n == 0 ? 5 : 0);
    }
    // Every reply, or 30 s.
    const auto final_until = Clock::now() + kFinalWait;
    give_up_at_ = final_until;
    while (!unanswered_.empty() && Clock::now() < final_until) {
      if (fd_ < 0 && !open_session(final_until)) continue;
      read_responses(20);
    }
    if (fd_ >= 0) {
      const std::string close = relp_frame(next_txnr_, "close", "");
      write_all(close);
      ::close(fd_);
      fd_ = -1;
    }
    for (const Unanswered& u : unanswered_) declare_unanswered(result, u.sequence, 1);
  }

  ConnectionResult result;
  uint64_t acknowledged = 0;
  std::vector<float> latencies_ms;

 private:
  bool open_session(Clock::time_point until) {
    if (opened_once_) {
      ++result.reconnects;
      std::this_thread::sleep_for(kReconnectBackoff);  // pacing a retry, not synchronisation
    }
    if (Clock::now() >= until) return false;
    std::string error;
    fd_ = connect_to(target_, false, error);
    if (fd_ < 0) {
      result.error = error;
      opened_once_ = true;
      return false;
    }
    wake_blocked_writes(fd_);
    opened_once_ = true;
    input_.clear();
    next_txnr_ = 1;
    open_txnr_ = next_txnr_++;
    if (!write_all(relp_frame(open_txnr_, "open", "relp_version=0\nrelp_software=sluice-loadgen\ncommands=syslog")))
      return false;
    open_answered_ = false;
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (fd_ >= 0 && !open_answered_ && Clock::now() < deadline) read_responses(20);
    if (!open_answered_) {
      fail("no answer to open");
      return false;
    }
    // What the broken session left unanswered goes again, under new numbers.
    std::string out;
    for (Unanswered& u : unanswered_) {
      u.txnr = next_txnr();
      u.written = Clock::now();
      out += relp_frame(u.txnr, "syslog", u.message);
    }
    return write_all(out);
  }

  uint32_t next_txnr() {
    const uint32_t t = next_txnr_;
    next_txnr_ = next_txnr_ == 999'999'999 ? 1 : next_txnr_ + 1;
    return t;
  }

  bool send_new(size_t n) {
    messages_.clear();
    ends_.clear();
    const uint64_t first = writer_.next_sequence();
    writer_.write(messages_, n, &ends_);
    std::string out;
    const auto now = Clock::now();
    size_t begin = 0;
    for (size_t i = 0; i < n; ++i) {
      std::string message = messages_.substr(begin, ends_[i] - begin);
      begin = ends_[i];
      const uint32_t txnr = next_txnr();
      out += relp_frame(txnr, "syslog", message);
      unanswered_.push_back({txnr, first + i, now, std::move(message)});
    }
    result.sent += n;
    return write_all(out);
  }

  bool write_all(std::string_view bytes) {
    std::string error;
    return loadgen::write_all(fd_, bytes, give_up_at_, error) || fail(error);
  }

  bool fail(const std::string& why) {
    result.error = why;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return false;
  }

  void read_responses(int wait_ms) {
    if (fd_ < 0) return;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0) return;
    char buffer[64 * 1024];
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n <= 0) {
      fail(n == 0 ? "the receiver closed the session" : std::strerror(errno));
      return;
    }
    input_.append(buffer, static_cast<size_t>(n));
    const auto now = Clock::now();
    std::string_view in(input_);
    while (!in.empty()) {
      uint32_t txnr = 0;
      std::string_view command, data;
      const long used = parse_response(in, txnr, command, data);
      if (used < 0) {
        fail("the receiver's reply is not RELP");
        return;
      }
      if (used == 0) break;
      in.remove_prefix(static_cast<size_t>(used));
      if (command == "serverclose") {
        fail("serverclose");
        return;
      }
      if (command != "rsp") continue;
      if (txnr == open_txnr_ && !open_answered_) {
        open_answered_ = data.starts_with("200");
        if (!open_answered_) fail("open refused: " + std::string(data));
        continue;
      }
      if (!data.starts_with("200")) continue;  // refused: stays unanswered, sent again on the next session
      // Replies come in order: usually the oldest unanswered.
      auto it =
          std::find_if(unanswered_.begin(), unanswered_.end(), [&](const Unanswered& u) { return u.txnr == txnr; });
      if (it == unanswered_.end()) continue;
      latencies_ms.push_back(std::chrono::duration<float, std::milli>(now - it->written).count());
      ++acknowledged;
      unanswered_.erase(it);
    }
    input_.erase(0, input_.size() - in.size());
  }

  const SendOptions& options_;
  const Target target_;
  EventWriter writer_;
  int fd_ = -1;
  bool opened_once_ = false;
  Clock::time_point give_up_at_;  // a write still waiting then gives up (run(): the run's end and --write-timeout)
  bool open_answered_ = false;
  uint32_t next_txnr_ = 1;
  uint32_t open_txnr_ = 0;
  std::string input_;
  std::deque<Unanswered> unanswered_;
  std::string messages_;
  std::vector<size_t> ends_;
};

}  // namespace

SendResult send_relp(const SendOptions& options) {
  if (options.targets.empty()) throw std::invalid_argument("no target");
  if (options.relp_window < 1) throw std::invalid_argument("--window must be at least 1");
  SendResult result = send_acknowledged<RelpConnection>(options);
  result.relp = true;
  result.relp_window = options.relp_window;
  return result;
}

}  // namespace sluice::loadgen
