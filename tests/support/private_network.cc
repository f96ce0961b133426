#include "tests/support/private_network.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace sluice::test {
namespace {

// Runs a command of iproute2 or iptables; returns its output, throws if it fails.
std::string run_tool(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  if (::pclose(pipe) != 0) throw std::runtime_error(command + " failed: " + output);
  return output;
}

}  // namespace

PrivateNetwork::PrivateNetwork() {
  original_ = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (original_ < 0) throw std::runtime_error(std::string("cannot open /proc/self/ns/net: ") + std::strerror(errno));
  if (::unshare(CLONE_NEWNET) != 0) {
    const int error = errno;
    ::close(original_);
    throw std::runtime_error(std::string("unshare(CLONE_NEWNET): ") + std::strerror(error) +
                             " (a private loopback needs root: CAP_SYS_ADMIN and CAP_NET_ADMIN)");
  }
  run_tool("ip link set lo up");
}

PrivateNetwork::~PrivateNetwork() {
  if (::setns(original_, CLONE_NEWNET) != 0)
    std::fprintf(stderr, "PrivateNetwork: setns back failed: %s\n", std::strerror(errno));
  ::close(original_);
}

void PrivateNetwork::drop_segments_to(uint16_t port, double probability) {
  char rule[256];
  std::snprintf(rule, sizeof rule,
                "iptables -w -A INPUT -p tcp --dport %u -m statistic --mode random --probability %.4f -j DROP",
                static_cast<unsigned>(port), probability);
  run_tool(rule);
}

void PrivateNetwork::black_hole_dns() {
  std::ifstream resolv("/etc/resolv.conf");
  std::string word, address;
  bool any = false;
  while (resolv >> word)
    if (word == "nameserver" && resolv >> address) {
      any = true;
      if (address.find(':') == std::string::npos && !address.starts_with("127."))
        run_tool("ip addr add " + address + "/32 dev lo");
    }
  if (!any) address = "127.0.0.1";
  for (const char* protocol : {"udp", "tcp"})
    run_tool(std::string("iptables -w -A INPUT -p ") + protocol + " --dport 53 -j DROP");
}

uint64_t PrivateNetwork::dropped_segments() const {
  // "pkts bytes target ..." rows, exact counts (-x).
  const std::string rows = run_tool("iptables -w -L INPUT -n -v -x");
  uint64_t total = 0;
  size_t at = 0;
  while ((at = rows.find('\n', at)) != std::string::npos) {
    ++at;
    unsigned long long packets = 0;
    char target[32] = {};
    if (std::sscanf(rows.c_str() + at, " %llu %*u %31s", &packets, target) == 2 && std::strcmp(target, "DROP") == 0)
      total += packets;
  }
  return total;
}

}  // namespace sluice::test
