#pragma once
// Flume's ipFilterRules (its Avro source's, with ipFilter = true): rules separated by commas,
// each <allow|deny>:<ip|name>:<pattern>, tried in order, the first that matches deciding; a client
// no rule matches is let in (Netty's RuleBasedIpFilter, which Flume uses). An ip pattern matches
// the client's address text whole, '*' any run of characters and '?' one, '.' itself (Flume
// makes a regular expression of it so; other regular-expression characters keep their meaning).
// name:localhost matches a loopback address; other name patterns would need a reverse lookup at
// each connect and are refused (use ip patterns, or allow/deny networks).

#include <sys/socket.h>

#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::pipeline {

class FlumeIpRules {
 public:
  FlumeIpRules() = default;
  // Throws std::invalid_argument saying which rule is not Flume's syntax, or is a name rule.
  explicit FlumeIpRules(std::string_view rules);
  bool empty() const { return rules_.empty(); }
  bool admits(const sockaddr_storage& peer) const;

 private:
  struct Rule {
    bool allow = false;
    bool loopback = false;  // name:localhost
    std::regex address;     // an ip pattern
  };
  std::vector<Rule> rules_;
};

}  // namespace sluice::pipeline
