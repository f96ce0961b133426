#include "sources/pipeline/flume_ip_rules.h"

#include <netinet/in.h>

#include <cstring>
#include <stdexcept>

#include "sources/pipeline/client_filter.h"

namespace sluice::pipeline {
namespace {

std::string trimmed(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(" \t") - first + 1));
}

// Flume's pattern as its regular expression: '.' literal, '*' any run, '?' any one character.
std::string pattern_regex(std::string_view pattern) {
  std::string out;
  for (const char c : pattern) {
    if (c == '.')
      out += "\\.";
    else if (c == '*')
      out += ".*";
    else if (c == '?')
      out += '.';
    else
      out += c;
  }
  return out;
}

bool is_loopback(const sockaddr_storage& peer) {
  if (peer.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in&>(peer).sin_addr.s_addr) >> 24) == 127;
  if (peer.ss_family != AF_INET6) return false;
  const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
}

}  // namespace

FlumeIpRules::FlumeIpRules(std::string_view rules) {
  size_t start = 0;
  while (start <= rules.size()) {
    const size_t comma = std::min(rules.find(',', start), rules.size());
    const std::string rule = trimmed(rules.substr(start, comma - start));
    start = comma + 1;
    if (rule.empty()) continue;
    const size_t first = rule.find(':'), second = first == std::string::npos ? first : rule.find(':', first + 1);
    const std::string access = rule.substr(0, first);
    const std::string kind = second == std::string::npos ? "" : rule.substr(first + 1, second - first - 1);
    if ((access != "allow" && access != "deny") || (kind != "ip" && kind != "name"))
      throw std::invalid_argument("\"" + rule + "\" is not <allow|deny>:<ip|name>:<pattern>");
    const std::string pattern = rule.substr(second + 1);
    Rule r;
    r.allow = access == "allow";
    if (kind == "name") {
      if (pattern != "localhost")
        throw std::invalid_argument("\"" + rule +
                                    "\": a name pattern other than localhost needs a reverse lookup at each connect, "
                                    "which this source does not do; match the addresses (ip:...) instead");
      r.loopback = true;
    } else {
      try {
        r.address = std::regex(pattern_regex(pattern), std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        throw std::invalid_argument("\"" + rule + "\": the pattern is not one: " + e.what());
      }
    }
    rules_.push_back(std::move(r));
  }
  if (rules_.empty()) throw std::invalid_argument("no rule");
}

namespace {

// An IPv4 client of a dual-stack listener (::ffff:10.0.0.5) as the IPv4 address it is: what the
// rules name (and what Java hands Flume).
sockaddr_storage unmapped(const sockaddr_storage& peer) {
  if (peer.ss_family != AF_INET6) return peer;
  const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
  if (!IN6_IS_ADDR_V4MAPPED(&a)) return peer;
  sockaddr_storage v4{};
  auto& in = reinterpret_cast<sockaddr_in&>(v4);
  in.sin_family = AF_INET;
  std::memcpy(&in.sin_addr, &a.s6_addr[12], 4);
  return v4;
}

}  // namespace

bool FlumeIpRules::admits(const sockaddr_storage& peer) const {
  const std::string address = address_text(unmapped(peer));
  for (const Rule& rule : rules_)
    if (rule.loopback ? is_loopback(peer) : std::regex_match(address, rule.address)) return rule.allow;
  return true;
}

}  // namespace sluice::pipeline
