#include "agent/http_endpoint.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CivetServer.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "agent/metrics.h"

namespace sluice {
namespace {

// A scraper's request is a line and a few headers, sent at once: a client that trickles one (or
// sends a huge one) holds a server thread only this long, and scrapes go on beside a few of them.
constexpr int kServerThreads = 4;
constexpr std::chrono::milliseconds kRequestTimeout{2000};  // to read a request, and per write of the answer
constexpr int kRequestMax = 8192;                           // bytes of request line and headers

}  // namespace

struct MetricsEndpoint::Server {
  // A page rendered from the agent's counters on each GET. (A member, not in the anonymous
  // namespace: where this file is compiled joined with others, a unity build, GCC warns of a class
  // whose fields have an anonymous namespace's type, -Wsubobject-linkage.)
  class TextHandler : public CivetHandler {
   public:
    TextHandler(std::string (*render)(const Agent&), const Agent& agent, const char* content_type)
        : render_(render), agent_(agent), content_type_(content_type) {}
    bool handleGet(CivetServer*, mg_connection* conn) override {
      const std::string body = render_(agent_);
      mg_printf(conn, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                content_type_, body.size());
      mg_write(conn, body.data(), body.size());
      return true;
    }

   private:
    std::string (*render_)(const Agent&);
    const Agent& agent_;
    const char* content_type_;
  };

  TextHandler prometheus;
  TextHandler json;
  CivetServer civet;
  Server(const std::vector<std::string>& options, const Agent& agent)
      : prometheus(&prometheus_text, agent, "text/plain; version=0.0.4"),
        json(&flume_json, agent, "application/json"),
        civet(options) {
    civet.addHandler("/metrics.json", json);
    civet.addHandler("/metrics", prometheus);
  }
};

MetricsEndpoint::MetricsEndpoint(const std::string& address, const Agent& agent) {
  try {
    server_ = std::make_unique<Server>(
        std::vector<std::string>{"listening_ports", address, "num_threads", std::to_string(kServerThreads),
                                 "request_timeout_ms", std::to_string(kRequestTimeout.count()), "max_request_size",
                                 std::to_string(kRequestMax)},
        agent);
  } catch (const CivetException& e) {
    throw std::runtime_error("cannot serve metrics on " + address + ": " + e.what());
  }
  const std::vector<int> ports = server_->civet.getListeningPorts();
  port_ = ports.empty() ? 0 : ports.front();
  const size_t colon = address.rfind(':');
  host_ = colon == std::string::npos ? "" : address.substr(0, colon);
  if (host_.size() > 2 && host_.front() == '[') host_ = host_.substr(1, host_.size() - 2);
}

// civetweb's listening thread polls its sockets 2 s at a time, and mg_stop waits for it to see
// the stop flag: a connection made while it stops wakes it at once (an exit 2 s sooner).
MetricsEndpoint::~MetricsEndpoint() {
  std::atomic<bool> stopped{false};
  std::thread knocker([&] {
    sockaddr_storage address{};
    socklen_t length = 0;
    if (!knock_address(address, length)) return;
    while (!stopped.load()) {
      const int fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return;
      ::connect(fd, reinterpret_cast<const sockaddr*>(&address), length);
      ::close(fd);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  server_.reset();
  stopped.store(true);
  knocker.join();
}

// The address the server listens on, with a wildcard host replaced by loopback.
bool MetricsEndpoint::knock_address(sockaddr_storage& address, socklen_t& length) const {
  const std::string host = host_.empty() || host_ == "0.0.0.0" ? "127.0.0.1" : host_ == "::" ? "::1" : host_;
  const std::string port = std::to_string(port_);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || !found) return false;
  std::memcpy(&address, found->ai_addr, found->ai_addrlen);
  length = found->ai_addrlen;
  freeaddrinfo(found);
  return true;
}

}  // namespace sluice
