#include "sources/pipeline/client_filter.h"

#include <charconv>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace sluice::pipeline {
namespace {

// The peer's address as its family and bytes; an IPv4-mapped IPv6 address counts as IPv4.
int peer_bytes(const sockaddr_storage& peer, const uint8_t*& bytes) {
  if (peer.ss_family == AF_INET) {
    bytes = reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in&>(peer).sin_addr);
    return AF_INET;
  }
  if (peer.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
      bytes = a.s6_addr + 12;
      return AF_INET;
    }
    bytes = a.s6_addr;
    return AF_INET6;
  }
  return 0;
}

}  // namespace

bool Network::contains(const sockaddr_storage& peer) const {
  const uint8_t* bytes = nullptr;
  if (peer_bytes(peer, bytes) != family) return false;
  const int full = prefix_bits / 8, rest = prefix_bits % 8;
  if (std::memcmp(bytes, address.data(), static_cast<size_t>(full)) != 0) return false;
  if (rest == 0) return true;
  const uint8_t mask = static_cast<uint8_t>(0xFF << (8 - rest));
  return (bytes[full] & mask) == (address[static_cast<size_t>(full)] & mask);
}

std::optional<Network> parse_network(const std::string& text) {
  const size_t slash = text.find('/');
  const std::string host = text.substr(0, slash);
  Network n;
  int max_bits = 0;
  if (inet_pton(AF_INET, host.c_str(), n.address.data()) == 1) {
    n.family = AF_INET;
    max_bits = 32;
  } else if (inet_pton(AF_INET6, host.c_str(), n.address.data()) == 1) {
    n.family = AF_INET6;
    max_bits = 128;
  } else {
    return std::nullopt;
  }
  n.prefix_bits = max_bits;
  if (slash != std::string::npos) {
    const std::string bits = text.substr(slash + 1);
    if (bits.empty() || bits.size() > 3 || !std::all_of(bits.begin(), bits.end(), ::isdigit)) return std::nullopt;
    n.prefix_bits = std::stoi(bits);
    if (n.prefix_bits > max_bits) return std::nullopt;
  }
  return n;
}

bool ClientFilter::admits(const sockaddr_storage& peer) const {
  for (const Network& n : deny_)
    if (n.contains(peer)) return false;
  if (!allow_.empty() && std::none_of(allow_.begin(), allow_.end(), [&](const Network& n) { return n.contains(peer); }))
    return false;
  return !flume_rules_ || flume_rules_->admits(peer);
}

std::optional<uint16_t> parse_port(std::string_view text) {
  uint32_t port = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (error != std::errc() || end != text.data() + text.size() || port > 65535) return std::nullopt;
  return static_cast<uint16_t>(port);
}

std::optional<Network> parse_cidr(std::string_view text) { return parse_network(std::string(text)); }

std::string address_text(const sockaddr_storage& peer) {
  char address[INET6_ADDRSTRLEN] = "?";
  if (peer.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, address, sizeof address);
  else if (peer.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr, address, sizeof address);
  return address;
}

}  // namespace sluice::pipeline
