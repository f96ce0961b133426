#pragma once
// Listening sockets handed from a source a reload replaces to its successor, so that a port never
// stops listening across a reload: a connection that arrives while the old source lets go and the
// new one starts waits in the socket's backlog (it is not refused), and the new source accepts it.
//
//   reload:  expect(keys of the new sources that an old one listens on)   (nothing stopped yet)
//            reserve(key, fd[, closer]): the new sources' other listeners, bound now: a port another
//                              program holds refuses the reload before anything stops
//            retiring old source: park(key, fd) for each expected key (its backlog left for the
//                              successor), closes the others as a shutdown does
//            new source starts: adopt(key) instead of binding
//            settle(): closes what no successor adopted (a parked socket's closer first: what it
//                      still holds is told of); forgets what was expected
//
// A listener's key: "host:port" for a port given as a number; for port 0 (any), the source's name
// and the port's place in its list, so that a source kept under its name keeps the port it got.
// A UDP source hands over its bound sockets the same way, one per io thread, under keys of its own
// ("udp/" + key + "/" + thread), each with a note: the socket's drop count it has counted up to.
// Thread-safe (a retiring source parks from its io thread). Owned by the agent (SharedState).

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace sluice {

class ListenerPool {
 public:
  ListenerPool() = default;
  ~ListenerPool();
  ListenerPool(const ListenerPool&) = delete;
  ListenerPool& operator=(const ListenerPool&) = delete;

  // Called by settle() for a parked socket no successor adopted, before it closes it.
  using Closer = std::function<void(int fd, uint64_t note)>;

  static std::string key(const std::string& source, const std::string& host, uint16_t configured_port, size_t index);

  void expect(const std::string& key);
  bool expects(const std::string& key) const;
  bool holds(const std::string& key) const;  // parked or reserved, not adopted yet
  // Takes the fd (a listening socket) and its note; a second one for the same key is closed.
  void park(const std::string& key, int fd, uint64_t note = 0, Closer closer = {});
  // park() if the key is expected (in one step: settle() cannot come between); false, the fd
  // untouched, if it is not.
  bool park_if_expected(const std::string& key, int fd, uint64_t note = 0, Closer closer = {});
  void reserve(const std::string& key, int fd, Closer closer = {}) { park(key, fd, 0, std::move(closer)); }
  // The fd parked or reserved under `key` (the caller owns it now), or -1; its note in `note`.
  int adopt(const std::string& key, uint64_t* note = nullptr);
  void settle();

 private:
  struct Parked {
    int fd;
    uint64_t note;
    Closer closer;
  };
  mutable std::mutex mutex_;
  std::set<std::string> expected_;
  std::map<std::string, Parked> parked_;
};

}  // namespace sluice
