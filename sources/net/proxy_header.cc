#include "sources/net/proxy_header.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <vector>

namespace sluice::net {
namespace {

constexpr std::string_view kV1Prefix = "PROXY ";
constexpr size_t kV1Max = 107;  // the spec's longest line, CRLF included
constexpr char kV2Signature[12] = {'\r', '\n', '\r', '\n', '\0', '\r', '\n', 'Q', 'U', 'I', 'T', '\n'};
constexpr size_t kV2Fixed = 16;  // signature, version/command, family, length

ProxyHeader refused(std::string why) {
  ProxyHeader h;
  h.state = ProxyHeader::State::refused;
  h.error = std::move(why);
  return h;
}

// True while `bytes` could still become `whole` (it is a prefix of it), or already starts with it.
bool may_start_with(std::string_view bytes, std::string_view whole) {
  const size_t n = std::min(bytes.size(), whole.size());
  return bytes.substr(0, n) == whole.substr(0, n);
}

std::optional<uint16_t> port_of(std::string_view text) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || value > 65535 ||
      (text.size() > 1 && text[0] == '0'))
    return std::nullopt;
  return static_cast<uint16_t>(value);
}

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  size_t start = 0;
  while (start <= line.size()) {
    const size_t space = line.find(' ', start);
    const size_t end = space == std::string_view::npos ? line.size() : space;
    words.push_back(line.substr(start, end - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return words;
}

// "PROXY TCP4 <src> <dst> <sport> <dport>\r\n", or "PROXY UNKNOWN[ anything]\r\n".
ProxyHeader parse_v1(std::string_view bytes) {
  const size_t crlf = bytes.substr(0, kV1Max).find("\r\n");
  if (crlf == std::string_view::npos)
    return bytes.size() >= kV1Max ? refused("a PROXY v1 line longer than 107 bytes") : ProxyHeader{};
  const std::string_view line = bytes.substr(0, crlf);
  const std::vector<std::string_view> words = words_of(line);
  ProxyHeader h;
  h.state = ProxyHeader::State::done;
  h.length = crlf + 2;
  if (words.size() >= 2 && words[1] == "UNKNOWN") return h;
  if (words.size() != 6) return refused("a malformed PROXY v1 line: \"" + std::string(line) + "\"");
  const std::string source(words[2]);
  sockaddr_storage client{};
  const std::optional<uint16_t> port = port_of(words[4]);
  const bool ports_ok = port && port_of(words[5]);
  if (words[1] == "TCP4") {
    auto* in = reinterpret_cast<sockaddr_in*>(&client);
    in->sin_family = AF_INET;
    if (!ports_ok || inet_pton(AF_INET, source.c_str(), &in->sin_addr) != 1)
      return refused("a malformed PROXY v1 TCP4 line: \"" + std::string(line) + "\"");
    in->sin_port = htons(*port);
  } else if (words[1] == "TCP6") {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&client);
    in6->sin6_family = AF_INET6;
    if (!ports_ok || inet_pton(AF_INET6, source.c_str(), &in6->sin6_addr) != 1)
      return refused("a malformed PROXY v1 TCP6 line: \"" + std::string(line) + "\"");
    in6->sin6_port = htons(*port);
  } else {
    return refused("a PROXY v1 line with protocol \"" + std::string(words[1]) + "\" (TCP4, TCP6 or UNKNOWN)");
  }
  h.client = client;
  return h;
}

uint16_t be16(const unsigned char* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

ProxyHeader parse_v2(std::string_view bytes) {
  if (bytes.size() < kV2Fixed) return {};
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned version = p[12] >> 4, command = p[12] & 0x0f;
  if (version != 2) return refused("a PROXY v2 signature with version " + std::to_string(version));
  if (command > 1) return refused("a PROXY v2 header with command " + std::to_string(command));
  const size_t length = be16(p + 14);
  if (kV2Fixed + length > kProxyHeaderMax)
    return refused("a PROXY v2 header of " + std::to_string(kV2Fixed + length) + " bytes (at most " +
                   std::to_string(kProxyHeaderMax) + ")");
  if (bytes.size() < kV2Fixed + length) return {};
  ProxyHeader h;
  h.state = ProxyHeader::State::done;
  h.length = kV2Fixed + length;
  if (command == 0) return h;  // LOCAL: the balancer's own connection (a health check)
  const unsigned family = p[13] >> 4, transport = p[13] & 0x0f;
  const unsigned char* addresses = p + kV2Fixed;
  sockaddr_storage client{};
  if (family == 1 && transport == 1 && length >= 12) {  // TCP over IPv4
    auto* in = reinterpret_cast<sockaddr_in*>(&client);
    in->sin_family = AF_INET;
    std::memcpy(&in->sin_addr, addresses, 4);
    std::memcpy(&in->sin_port, addresses + 8, 2);              // both in network order
  } else if (family == 2 && transport == 1 && length >= 36) {  // TCP over IPv6
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&client);
    in6->sin6_family = AF_INET6;
    std::memcpy(&in6->sin6_addr, addresses, 16);
    std::memcpy(&in6->sin6_port, addresses + 32, 2);
  } else if (family == 0) {  // UNSPEC: the spec says to keep the socket's own addresses
    return h;
  } else {
    return refused("a PROXY v2 header for family " + std::to_string(family) + ", transport " +
                   std::to_string(transport) + " (TCP over IPv4 or IPv6 expected)");
  }
  h.client = client;
  return h;  // TLVs after the addresses are skipped: h.length covers them
}

}  // namespace

ProxyHeader parse_proxy_header(std::string_view bytes, ProxyProtocol accepted) {
  const bool v1 = accepted == ProxyProtocol::v1 || accepted == ProxyProtocol::any;
  const bool v2 = accepted == ProxyProtocol::v2 || accepted == ProxyProtocol::any;
  const std::string_view signature(kV2Signature, sizeof kV2Signature);
  const bool could_be_v1 = may_start_with(bytes, kV1Prefix), could_be_v2 = may_start_with(bytes, signature);
  if (v1 && could_be_v1) return bytes.size() < kV1Prefix.size() ? ProxyHeader{} : parse_v1(bytes);
  if (v2 && could_be_v2) return bytes.size() < signature.size() ? ProxyHeader{} : parse_v2(bytes);
  if (could_be_v1 && bytes.size() >= kV1Prefix.size()) return refused("a PROXY v1 header where v2 is required");
  if (could_be_v2 && bytes.size() >= signature.size()) return refused("a PROXY v2 header where v1 is required");
  if (bytes.empty()) return {};
  return refused("no PROXY protocol header");
}

}  // namespace sluice::net
