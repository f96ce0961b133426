#pragma once
// A discard receiver: accepts TCP connections on loopback and counts the LF-terminated
// events it reads, then throws them away. It measures senders (sluice-loadgen, loggen) without
// an agent in the way, and is the counting end of the load generator's own tests.

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace sluice::loadgen {

class CountingReceiver {
 public:
  // Listens on 127.0.0.1:port (0: a free port) and serves from its own thread until stop().
  explicit CountingReceiver(uint16_t port = 0);
  ~CountingReceiver();
  CountingReceiver(const CountingReceiver&) = delete;
  CountingReceiver& operator=(const CountingReceiver&) = delete;

  uint16_t port() const { return port_; }
  uint64_t events() const { return events_.load(); }
  uint64_t bytes() const { return bytes_.load(); }
  uint64_t connections_accepted() const { return accepted_.load(); }
  // Closes every open connection (the sender sees its peer go away), keeps listening.
  void drop_connections() { drop_.store(true); }
  // Half-closes every open connection, as Sluice does at shutdown (our FIN), and reads each
  // until its sender closes it; keeps listening.
  void half_close_connections() { half_close_.store(true); }
  void stop();

 private:
  void serve();

  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> drop_{false};
  std::atomic<bool> half_close_{false};
  std::atomic<uint64_t> events_{0}, bytes_{0}, accepted_{0};
};

}  // namespace sluice::loadgen
