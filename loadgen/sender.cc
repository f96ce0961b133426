#include "loadgen/sender.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "loadgen/event_template.h"

namespace sluice::loadgen {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChunkEvents = 256;

int connect_to(const Target& target, std::string& error) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(target.port);
  if (int rc = getaddrinfo(target.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    error = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    error = std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  return fd;
}

struct Connection {
  ConnectionResult result;
  Target target;
  EventWriter writer;
  int fd = -1;
  Connection(uint32_t id, const Target& t, size_t size) : target(t), writer(size, id) {
    result.id = id;
    result.target = t.host + ":" + std::to_string(t.port);
  }
};

// Writes all of `data`; false (with errno's text in error) if the socket failed.
bool write_all(int fd, const std::string& data, std::string& error) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = std::strerror(errno);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Target parse_target(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw std::invalid_argument("target \"" + text + "\" is not host:port");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = 0;
  try {
    port = std::stoi(text.substr(colon + 1));
  } catch (...) {
    port = -1;
  }
  if (port <= 0 || port > 65535) throw std::invalid_argument("target \"" + text + "\": bad port");
  return {host, static_cast<uint16_t>(port)};
}

bool SendResult::ok() const {
  for (const auto& c : connections)
    if (!c.error.empty()) return false;
  return true;
}

std::string SendResult::to_json() const {
  std::ostringstream out;
  out << "{\"sent\":" << sent << ",\"seconds\":" << seconds << ",\"rate\":" << std::llround(rate())
      << ",\"cpu_seconds\":" << cpu_seconds
      << ",\"connections\":[";
  for (size_t i = 0; i < connections.size(); ++i) {
    const auto& c = connections[i];
    out << (i ? "," : "") << "\n {\"id\":" << c.id << ",\"sent\":" << c.sent << ",\"possibly_lost\":" << c.possibly_lost
        << ",\"target\":\"" << c.target << "\",\"error\":\"" << c.error << "\"}";
  }
  out << "]}\n";
  return out.str();
}

SendResult send_events(const SendOptions& options) {
  if (options.targets.empty()) throw std::invalid_argument("no target");
  if (options.connections < 1) throw std::invalid_argument("--connections must be at least 1");
  if (options.ramp.count() > 0 && options.rate <= 0) throw std::invalid_argument("--ramp needs a --rate to rise to");
  const int threads = options.threads > 0 ? options.threads : std::min(options.connections, 2);

  std::vector<std::unique_ptr<Connection>> connections;
  for (int i = 0; i < options.connections; ++i) {
    auto c = std::make_unique<Connection>(static_cast<uint32_t>(i), options.targets[i % options.targets.size()],
                                          options.size);
    c->fd = connect_to(c->target, c->result.error);
    if (c->fd < 0) throw std::runtime_error("cannot connect to " + c->result.target + ": " + c->result.error);
    connections.push_back(std::move(c));
  }

  std::atomic<uint64_t> total{0};
  std::atomic<int> running{threads};
  const auto start = Clock::now();
  const auto end = start + options.duration;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::vector<Connection*> mine;
      for (size_t i = static_cast<size_t>(t); i < connections.size(); i += static_cast<size_t>(threads))
        mine.push_back(connections[i].get());
      const double rate = options.rate / threads;
      const uint64_t quota = options.count ? options.count / threads + (static_cast<uint64_t>(t) < options.count % threads) : 0;
      uint64_t sent = 0;
      std::string buffer;
      buffer.reserve(kChunkEvents * options.size);
      size_t next = 0;
      while (!mine.empty()) {
        const auto now = Clock::now();
        if (now >= end || (quota && sent >= quota)) break;
        size_t chunk = kChunkEvents;
        if (quota) chunk = std::min<uint64_t>(chunk, quota - sent);
        if (rate > 0) {
          // Token bucket: events allowed so far minus events sent.
          const double t = std::chrono::duration<double>(now - start).count();
          const double ramp = std::chrono::duration<double>(options.ramp).count();
          // The integral of the rate: a linear rise over the ramp, then flat.
          const double allowed = t < ramp ? rate * t * t / (2 * ramp) : rate * (t - ramp / 2);
          const double tokens = allowed - static_cast<double>(sent);
          // Wait for a worthwhile chunk (about a millisecond's worth) rather than single events.
          const double want = std::min<double>(static_cast<double>(chunk), std::max(1.0, rate / 1000));
          if (tokens < want) {
            std::this_thread::sleep_for(std::chrono::duration<double>(std::min((want - tokens) / rate, 0.01)));
            continue;
          }
          chunk = std::min<size_t>(chunk, static_cast<size_t>(tokens));
        }
        Connection* c = mine[next++ % mine.size()];
        buffer.clear();
        c->writer.write(buffer, chunk);
        if (!write_all(c->fd, buffer, c->result.error)) {
          c->result.possibly_lost += chunk;
          std::fprintf(stderr, "loadgen: connection %u to %s failed: %s\n", c->result.id, c->result.target.c_str(),
                       c->result.error.c_str());
          ::close(c->fd);
          c->fd = -1;
          std::erase(mine, c);
          continue;
        }
        c->result.sent += chunk;
        sent += chunk;
        total.fetch_add(chunk, std::memory_order_relaxed);
      }
      running.fetch_sub(1);
    });
  }

  uint64_t last_total = 0;
  auto last_time = start;
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto now = Clock::now();
    if (options.progress_interval.count() && now - last_time >= options.progress_interval) {
      const uint64_t t = total.load();
      std::fprintf(stderr, "loadgen: %8.1fs  %10.0f ev/s  total %12llu\n",
                   std::chrono::duration<double>(now - start).count(),
                   (t - last_total) / std::chrono::duration<double>(now - last_time).count(),
                   static_cast<unsigned long long>(t));
      last_total = t;
      last_time = now;
    }
  }
  for (auto& w : workers) w.join();
  SendResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  result.cpu_seconds = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
  for (auto& c : connections) {
    if (c->fd >= 0) ::close(c->fd);
    result.sent += c->result.sent;
    result.connections.push_back(c->result);
  }
  return result;
}

}  // namespace sluice::loadgen
