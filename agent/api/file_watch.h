#pragma once
// Files read once and used for long (TLS certificates, keys, CAs, CRLs) that an operator or a
// tool (cert-manager, certbot, a Kubernetes secret's symlink swap) replaces in place. FileWatch
// says whether any of them changed since it last looked: its inode, size or modification time (a
// file that appears or goes away is a change too). PeriodicCheck runs a check on a thread of its
// own every interval until it is destroyed, so that a loop busy with traffic does not have to.

#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sluice {

class FileWatch {
 public:
  explicit FileWatch(std::vector<std::string> paths);
  // True if a file changed since the last call (or construction); the new state is kept either way.
  bool changed();
  // What was read of them did not load: the next look counts as a change, so that it is tried
  // again (a file caught half written may change no more in a way its size and time show).
  void look_again() { seen_.assign(seen_.size(), State{.exists = false, .inode = ~ino_t{0}}); }
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  struct State {
    bool exists = false;
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec modified{};
    bool operator==(const State& other) const;
  };
  static State look(const std::string& path);

  std::vector<std::string> paths_;
  std::vector<State> seen_;
};

class PeriodicCheck {
 public:
  // Calls `check` every `every` (from the first interval on) until destroyed.
  PeriodicCheck(std::chrono::milliseconds every, std::function<void()> check);
  ~PeriodicCheck();
  PeriodicCheck(const PeriodicCheck&) = delete;
  PeriodicCheck& operator=(const PeriodicCheck&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace sluice
