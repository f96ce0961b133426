#pragma once
// A network namespace of the test's own (unshare(CLONE_NEWNET) on the test's thread): a private
// loopback that a test may make lossy with iptables without touching the machine's, and that
// every process the test starts from then on shares. Needs CAP_SYS_ADMIN and CAP_NET_ADMIN
// (root: CI runs as root); without them the constructor throws, saying so.

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::test {

class PrivateNetwork {
 public:
  PrivateNetwork();   // throws std::runtime_error with the reason
  ~PrivateNetwork();  // back to the namespace the thread had (processes started meanwhile stay)
  PrivateNetwork(const PrivateNetwork&) = delete;
  PrivateNetwork& operator=(const PrivateNetwork&) = delete;

  // Drops TCP segments going to `port` at random, each with `probability` (iptables' statistic
  // match): data, acknowledgements and handshakes alike, as a lossy link would.
  void drop_segments_to(uint16_t port, double probability);
  // A resolver that never answers: the nameservers of /etc/resolv.conf (127.0.0.1 if none) are
  // addresses of this loopback, and every DNS query to them is dropped, so that a lookup waits
  // for the resolver's own timeout (RES_OPTIONS sets it) as it would behind a dead resolver.
  void black_hole_dns();
  // The rules' counters: how many segments were dropped so far.
  uint64_t dropped_segments() const;

 private:
  int original_ = -1;  // the namespace to return to
};

}  // namespace sluice::test
