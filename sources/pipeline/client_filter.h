#pragma once
// Which clients may connect: allow/deny lists of networks (CIDR), checked once per accepted
// connection. An exposed port need not be open to the world.

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sources/pipeline/flume_ip_rules.h"

namespace sluice::pipeline {

struct Network {
  int family = 0;  // AF_INET or AF_INET6
  std::array<uint8_t, 16> address{};
  int prefix_bits = 0;
  bool contains(const sockaddr_storage& peer) const;
};

// "10.0.0.0/8", "192.168.1.7" (/32), "::1", "fd00::/8"; nullopt if not a network.
std::optional<Network> parse_network(const std::string& text);

// For the sources' property rows (config::list_of, parsed_as): a port, a network, and what the
// error says was expected.
std::optional<uint16_t> parse_port(std::string_view text);
std::optional<Network> parse_cidr(std::string_view text);
inline constexpr const char* kNetwork = "a network (e.g. 10.0.0.0/8, 192.0.2.7, fd00::/8)";

// The address of a peer as text ("192.0.2.7", "::1"), for logs and clientIPHeader.
std::string address_text(const sockaddr_storage& peer);

class ClientFilter {
 public:
  ClientFilter() = default;
  ClientFilter(std::vector<Network> allow, std::vector<Network> deny)
      : allow_(std::move(allow)), deny_(std::move(deny)) {}
  // Flume's ipFilterRules (the Avro source's), asked after the networks.
  void set_flume_rules(std::shared_ptr<const FlumeIpRules> rules) { flume_rules_ = std::move(rules); }
  // Denied if in a deny network, or if allow networks are given and it is in none of them, or if
  // Flume's rules deny it.
  bool admits(const sockaddr_storage& peer) const;
  bool filters() const { return !allow_.empty() || !deny_.empty() || flume_rules_; }

 private:
  std::vector<Network> allow_, deny_;
  std::shared_ptr<const FlumeIpRules> flume_rules_;
};

}  // namespace sluice::pipeline
