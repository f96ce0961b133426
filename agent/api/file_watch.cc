#include "agent/api/file_watch.h"

namespace sluice {

bool FileWatch::State::operator==(const State& other) const {
  return exists == other.exists && device == other.device && inode == other.inode && size == other.size &&
         modified.tv_sec == other.modified.tv_sec && modified.tv_nsec == other.modified.tv_nsec;
}

FileWatch::State FileWatch::look(const std::string& path) {
  struct stat st {};
  State state;
  if (::stat(path.c_str(), &st) != 0) return state;  // through symlinks: a swapped link is a change
  state.exists = true;
  state.device = st.st_dev;
  state.inode = st.st_ino;
  state.size = st.st_size;
  state.modified = st.st_mtim;
  return state;
}

FileWatch::FileWatch(std::vector<std::string> paths) : paths_(std::move(paths)) {
  for (const std::string& path : paths_) seen_.push_back(look(path));
}

bool FileWatch::changed() {
  bool any = false;
  for (size_t i = 0; i < paths_.size(); ++i) {
    State now = look(paths_[i]);
    if (now == seen_[i]) continue;
    seen_[i] = now;
    any = true;
  }
  return any;
}

PeriodicCheck::PeriodicCheck(std::chrono::milliseconds every, std::function<void()> check)
    : thread_([this, every, check = std::move(check)] {
        std::unique_lock lock(mutex_);
        while (!wake_.wait_for(lock, every, [this] { return stopping_; })) {
          lock.unlock();
          check();
          lock.lock();
        }
      }) {}

PeriodicCheck::~PeriodicCheck() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

}  // namespace sluice
