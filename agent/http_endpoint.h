#pragma once
// The metrics endpoint: GET /metrics (Prometheus text format) and GET /metrics.json (Flume's
// JSON reporting). Served by civetweb's own threads; each request folds the components'
// counters then and there, so an agent nobody scrapes pays nothing.

#include <sys/socket.h>

#include <memory>
#include <string>

namespace sluice {

class Agent;

class MetricsEndpoint {
 public:
  // address: "host:port" (port 0: any free port). Throws std::runtime_error if it cannot listen.
  MetricsEndpoint(const std::string& address, const Agent& agent);
  ~MetricsEndpoint();
  int port() const { return port_; }

 private:
  bool knock_address(sockaddr_storage& address, socklen_t& length) const;

  struct Server;
  std::unique_ptr<Server> server_;
  std::string host_;  // as configured ("" or a wildcard: any)
  int port_ = 0;
};

}  // namespace sluice
