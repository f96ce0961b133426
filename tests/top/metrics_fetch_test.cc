// The one GET `sluice top` makes each refresh, against a loopback server that answers as told:
// the body of a 200, and for everything else an error that says what went wrong, within the
// timeout.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "top/metrics_fetch.h"

using namespace sluice::top;
using namespace std::chrono_literals;

namespace {

// Accepts one connection on 127.0.0.1 and gives it `answer` (after reading the request), then
// closes it, unless `hold` (then it keeps it open, silent, until destroyed).
class OneAnswer {
 public:
  explicit OneAnswer(std::string answer, bool hold = false) : answer_(std::move(answer)), hold_(hold) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_, 1) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("cannot listen on 127.0.0.1");
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  OneAnswer(const OneAnswer&) = delete;
  OneAnswer& operator=(const OneAnswer&) = delete;
  ~OneAnswer() {
    done_ = true;
    ::shutdown(listener_, SHUT_RDWR);  // wakes accept() if nobody came
    if (thread_.joinable()) thread_.join();
    ::close(listener_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // What the client asked, once the answer is given (not with hold).
  const std::string& request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }

 private:
  void serve() {
    const int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    char buffer[4096];
    while (request_.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      request_.append(buffer, static_cast<size_t>(n));
    }
    for (size_t sent = 0; sent < answer_.size();) {
      const ssize_t n = ::send(fd, answer_.data() + sent, answer_.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    while (hold_ && !done_) std::this_thread::sleep_for(10ms);
    ::close(fd);
  }

  const std::string answer_;
  const bool hold_;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> done_{false};
  std::string request_;
  std::thread thread_;
};

// fetch_metrics' error, "" if it did not throw.
std::string error_of(const std::string& address, std::chrono::milliseconds timeout) {
  try {
    fetch_metrics(address, timeout);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a 200 answer's body is returned, asked for with Host and the path", "[top]") {
  OneAnswer server("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nsluice_up 1\n");
  CHECK(fetch_metrics("http://" + server.address() + "/metrics", 2s) == "sluice_up 1\n");
  CHECK(server.request().rfind("GET /metrics HTTP/1.0\r\nHost: " + server.address() + "\r\n", 0) == 0);
}

TEST_CASE("answers that are not a 200 with a body are errors that say what came back", "[top]") {
  {
    OneAnswer server("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    CHECK(error_of(server.address(), 2s) == "http://" + server.address() + "/metrics answered 404 Not Found");
  }
  {
    OneAnswer server("SSH-2.0-OpenSSH_9.2\r\n");
    CHECK(error_of(server.address(), 2s) == "http://" + server.address() + "/metrics did not answer in HTTP");
  }
  {
    OneAnswer server("HTTP/1.1\r\n\r\n");  // a status line too short to hold a status
    CHECK(error_of(server.address(), 2s) == "http://" + server.address() + "/metrics answered HTTP/1.1");
  }
}

TEST_CASE("an agent that does not finish its answer is given up at the timeout", "[top]") {
  OneAnswer server("HTTP/1.0 200 OK\r\n\r\nsluice_up", true);
  const auto started = std::chrono::steady_clock::now();
  CHECK(error_of(server.address(), 300ms) ==
        "cannot read http://" + server.address() + "/metrics: no complete answer within 300 ms");
  CHECK(std::chrono::steady_clock::now() - started < 2s);
}

TEST_CASE("an answer over 64 MiB is refused, not read to its end", "[top]") {
  OneAnswer server("HTTP/1.0 200 OK\r\n\r\n" + std::string((size_t{64} << 20) + 1, 'x'));
  CHECK(error_of(server.address(), 10s) ==
        "cannot read http://" + server.address() + "/metrics: the answer is over 64 MiB (not an agent's metrics?)");
}

TEST_CASE("a port nobody listens on, and an address that is not one, are said", "[top]") {
  std::string address;
  {
    OneAnswer gone("");
    address = gone.address();
  }  // closed: nothing listens there now
  CHECK_THAT(error_of(address, 1s), Catch::StartsWith("cannot read http://" + address + "/metrics: "));
  CHECK(error_of("localhost", 1s) == "'localhost' is not host:port");
  CHECK(error_of("[::1]:", 1s) == "'[::1]:' is not host:port");
  CHECK(error_of("[::1", 1s) == "'[::1' is not [address]:port");
}
