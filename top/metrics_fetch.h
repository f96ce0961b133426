#pragma once
// One GET of an agent's /metrics over HTTP/1.0: what `sluice top` reads each refresh.

#include <chrono>
#include <string>

namespace sluice::top {

// `address` is host:port, [v6]:port or http://host:port[/path] (path default /metrics). Returns
// the body of a 200 answer; throws std::runtime_error saying what failed (resolve, connect,
// timeout, status) otherwise. The whole exchange is bounded by `timeout`.
std::string fetch_metrics(const std::string& address, std::chrono::milliseconds timeout);

}  // namespace sluice::top
