#include "agent/http_endpoint.h"

#include <CivetServer.h>

#include <stdexcept>

#include "agent/metrics.h"

namespace sluice {
namespace {

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

}  // namespace

struct MetricsEndpoint::Server {
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
    server_ = std::make_unique<Server>(std::vector<std::string>{"listening_ports", address, "num_threads", "2"}, agent);
  } catch (const CivetException& e) {
    throw std::runtime_error("cannot serve metrics on " + address + ": " + e.what());
  }
  const std::vector<int> ports = server_->civet.getListeningPorts();
  port_ = ports.empty() ? 0 : ports.front();
}

MetricsEndpoint::~MetricsEndpoint() = default;

}  // namespace sluice
