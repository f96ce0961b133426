#include "loadgen/sender.h"
#include "loadgen/tls_client.h"

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sluice::loadgen {

// Binds `fd` to the local address `from` (port chosen by the kernel): a sender that looks like
// another client (a 127.0.0.x of its own).
bool bind_to(int fd, int family, const std::string& from, std::string& error) {
  sockaddr_storage local{};
  socklen_t length = 0;
  if (family == AF_INET && inet_pton(AF_INET, from.c_str(), &reinterpret_cast<sockaddr_in&>(local).sin_addr) == 1) {
    local.ss_family = AF_INET;
    length = sizeof(sockaddr_in);
  } else if (family == AF_INET6 &&
             inet_pton(AF_INET6, from.c_str(), &reinterpret_cast<sockaddr_in6&>(local).sin6_addr) == 1) {
    local.ss_family = AF_INET6;
    length = sizeof(sockaddr_in6);
  } else {
    error = "--from " + from + ": not an address of the target's family";
    return false;
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), length) == 0) return true;
  error = "--from " + from + ": " + std::strerror(errno);
  return false;
}

// A TCP connection, or a UDP socket connected to the target (so that send() needs no address
// and a closed port comes back as ECONNREFUSED).
int connect_to(const Target& target, bool udp, std::string& error) {
  addrinfo hints{};
  hints.ai_socktype = udp ? SOCK_DGRAM : SOCK_STREAM;
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
    if (!target.from.empty() && !bind_to(fd, a->ai_family, target.from, error)) {
      ::close(fd);
      fd = -1;
      continue;
    }
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    error = std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  return fd;
}

void wake_blocked_writes(int fd) {
  const timeval wake{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wake, sizeof wake);
}

bool write_all(int fd, std::string_view data, std::chrono::steady_clock::time_point give_up_at, std::string& error) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      error = std::strerror(errno);
      return false;
    }
    // Only a write that waits comes back here unfinished: the clock is read off the fast path.
    if (!data.empty() && std::chrono::steady_clock::now() >= give_up_at) {
      error = kWriteDeadlinePassed;
      return false;
    }
  }
  return true;
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChunkEvents = 256;
constexpr auto kReconnectMin = std::chrono::milliseconds(100);
constexpr auto kReconnectMax = std::chrono::milliseconds(2000);

// Plain TCP: which events the receiver's kernel has acknowledged, from the socket's send queue
// (SIOCOUTQ: bytes written and not yet acknowledged). An event whose last byte is acknowledged
// reached the receiver; one that is not may never have left us. When the connection then fails
// (the receiver reset it) or the receiver goes away with it unacknowledged, those events are
// declared possibly lost, so that the verifier can tell "never left the sender" from "lost
// after it reached the receiver". (Over TLS the queue holds records, not events: not tracked.)
class UnacknowledgedTail {
 public:
  // Events of `buffer` (ending at `ends`), just written whole, starting at sequence `first`.
  void written(const std::vector<size_t>& ends, uint64_t first) {
    for (size_t i = 0; i < ends.size(); ++i) events_.push_back({written_ + ends[i], first + i});
    written_ += ends.empty() ? 0 : ends.back();
  }
  // Reads the socket's send queue and forgets the events it no longer holds. False once the
  // socket cannot say (closed, reset): what is left stays unacknowledged.
  bool update(int fd) {
    // A reset empties the queue without acknowledging anything: only an open connection counts.
    tcp_info info{};
    socklen_t length = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0 ||
        (info.tcpi_state != TCP_ESTABLISHED && info.tcpi_state != TCP_CLOSE_WAIT))
      return false;
    int queued = 0;
    if (::ioctl(fd, SIOCOUTQ, &queued) != 0 || queued < 0) return false;
    const uint64_t acknowledged = written_ - std::min<uint64_t>(written_, static_cast<uint64_t>(queued));
    while (!events_.empty() && events_.front().end <= acknowledged) events_.pop_front();
    return true;
  }
  bool empty() const { return events_.empty(); }
  // The sequence numbers not known to have arrived, [first, last]; forgotten by this call.
  std::pair<uint64_t, uint64_t> take_all() {
    const std::pair<uint64_t, uint64_t> range{events_.front().sequence, events_.back().sequence};
    events_.clear();
    return range;
  }
  void reset() {
    events_.clear();
    written_ = 0;
  }

 private:
  struct Event {
    uint64_t end;  // offset after its last byte, over the connection's life
    uint64_t sequence;
  };
  std::deque<Event> events_;
  uint64_t written_ = 0;
};

struct Connection {
  ConnectionResult result;
  Target target;
  EventWriter writer;
  int fd = -1;
  SSL* tls = nullptr;  // --tls: the session over fd
  Clock::time_point next_attempt{};
  std::chrono::milliseconds backoff = kReconnectMin;
  // Down because the receiver asked (its FIN: a stop, maxConnectionAge), not by a failure: one
  // that the run's end finds waiting to reconnect has not failed.
  bool down_as_asked = false;
  UnacknowledgedTail unacknowledged;  // plain TCP
  bool gso = true;                    // UDP: segmentation offload, until the kernel refuses it
  bool sent_with_gso = false;         // UDP: some of its datagrams went 64 to a packet
  Connection(uint32_t id, const Target& t, const EventFormat& format) : target(t), writer(format, id) {
    result.id = id;
    result.target = t.host + ":" + std::to_string(t.port);
  }
  ~Connection() { close(); }

  // TCP (with TLS's handshake, if a client is given) or UDP; false with the reason in result.error.
  bool open(bool udp, const TlsClient* client) {
    fd = connect_to(target, udp, result.error);
    if (fd < 0 || udp) return fd >= 0;
    if (client && !(tls = client->connect(fd, result.error))) {
      close();
      return false;
    }
    wake_blocked_writes(fd);  // after the handshake, which has bounds of its own
    return true;
  }
  // Events written but not acknowledged by the receiver, now given up for lost: recorded.
  void declare_unacknowledged_lost() {
    if (unacknowledged.empty()) return;
    const auto [first, last] = unacknowledged.take_all();
    result.possibly_lost += last - first + 1;
    result.lost_ranges.emplace_back(first, last);
  }
  // A connection given up in the middle of a write. Plain TCP: reset (RST), so that the kernel
  // drops what it still holds and a receiver that reads again cannot take the cut event for a whole
  // one (those events are declared possibly lost already). TLS: closed without close_notify, so
  // that the records before the cut one (not tracked, not declared) can still be delivered; a
  // receiver cannot take a cut record for a whole one.
  void abandon() {
    unacknowledged.reset();
    if (tls) {
      SSL_free(tls);
      tls = nullptr;
    } else {
      const linger at_once{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &at_once, sizeof at_once);
    }
    ::close(fd);
    fd = -1;
  }
  // One connection (a reconnect); the end of a run closes them together (close_all).
  void close() {
    unacknowledged.reset();
    if (tls) {
      begin_close(tls, fd, Clock::now() + std::chrono::seconds(1));
      finish_close(tls, fd, Clock::now() + std::chrono::seconds(2));
    }
    tls = nullptr;
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Counters the progress line reads while the threads send.
struct LiveStats {
  std::atomic<uint64_t> sent{0}, reconnects{0}, blocked_ns{0};
  std::atomic<int> up{0};
};

// True once the receiver has half-closed the connection (its FIN: "I am going away"). A
// sender that stops writing then, and closes, loses nothing: the receiver reads until our close.
// A reset (POLLERR, POLLHUP) is not that: the write after it fails and counts as possibly lost.
bool receiver_closing(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLRDHUP) && !(p.revents & (POLLERR | POLLHUP));
}

// How long a sender waits, after the receiver's FIN, for it to acknowledge what was written
// (Sluice reads for at most 10 s at a stop, then cuts).
constexpr auto kAcknowledgementWaitMax = std::chrono::seconds(11);

// The receiver reset the connection (or it failed otherwise).
bool socket_failed(int fd) {
  pollfd p{fd, 0, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLHUP));
}

// A connection's write (plain or TLS) by `give_up_at`, its time counted as blocked.
bool write_counted(const Connection& c, const std::string& data, Clock::time_point give_up_at, std::string& error,
                   LiveStats& stats) {
  const auto start = Clock::now();
  const bool written =
      c.tls ? loadgen::write_all(c.tls, data, give_up_at, error) : loadgen::write_all(c.fd, data, give_up_at, error);
  stats.blocked_ns.fetch_add(static_cast<uint64_t>((Clock::now() - start).count()), std::memory_order_relaxed);
  return written;
}

// Sends each event of `data` (ending at `ends`) as one datagram, as many per call as the kernel
// takes. Returns how many left; fewer than all (with errno's text in error) if a send failed.
//
// With `gso` and datagrams of one size (the fixed templates), each message carries up to
// kSegmentsPerSend of them and UDP_SEGMENT: the kernel cuts it into ordinary datagrams of that
// size (what a receiver sees is exactly what many separate sends give), at a fraction of our
// CPU, which on loopback is also what the machine spends delivering. A kernel or route that
// refuses it (EINVAL, EIO) turns `gso` off for good and the datagrams go one by one.
size_t send_datagrams(int fd, const std::string& data, const std::vector<size_t>& ends, bool& gso, std::string& error,
                      LiveStats& stats) {
  constexpr size_t kSegmentsPerSend = 64;  // the kernel's limit is 64 (128 from Linux 6.x)
  const size_t size = ends.empty() ? 0 : ends[0];
  bool one_size = gso && size > 0;
  for (size_t i = 1; one_size && i < ends.size(); ++i) one_size = ends[i] - ends[i - 1] == size;
  const size_t per_message = one_size ? kSegmentsPerSend : 1;
  const size_t count = (ends.size() + per_message - 1) / per_message;
  std::vector<iovec> parts(count);
  std::vector<mmsghdr> messages(count);
  std::vector<size_t> datagrams_in(count);
  union Control {
    char buffer[CMSG_SPACE(sizeof(uint16_t))];
    cmsghdr align;
  };
  std::vector<Control> controls(one_size ? count : 0);
  size_t begin = 0;
  for (size_t m = 0, first = 0; m < count; ++m, first += per_message) {
    const size_t last = std::min(first + per_message, ends.size()) - 1;
    parts[m] = {const_cast<char*>(data.data()) + begin, ends[last] - begin};
    datagrams_in[m] = last - first + 1;
    messages[m] = {};
    messages[m].msg_hdr.msg_iov = &parts[m];
    messages[m].msg_hdr.msg_iovlen = 1;
    if (one_size && datagrams_in[m] > 1) {
      messages[m].msg_hdr.msg_control = controls[m].buffer;
      messages[m].msg_hdr.msg_controllen = sizeof controls[m].buffer;
      cmsghdr* c = CMSG_FIRSTHDR(&messages[m].msg_hdr);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
      const auto segment = static_cast<uint16_t>(size);
      std::memcpy(CMSG_DATA(c), &segment, sizeof segment);
    }
    begin = ends[last];
  }
  const auto start = Clock::now();
  size_t done = 0, sent = 0;
  while (done < messages.size()) {
    const int n = ::sendmmsg(fd, messages.data() + done, static_cast<unsigned>(messages.size() - done), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (one_size && sent == 0 && (errno == EINVAL || errno == EIO)) {
        gso = false;  // not here: one by one, this time and from now on
        return send_datagrams(fd, data, ends, gso, error, stats);
      }
      error = std::strerror(errno);
      break;
    }
    for (int i = 0; i < n; ++i) sent += datagrams_in[done + static_cast<size_t>(i)];
    done += static_cast<size_t>(n);
  }
  stats.blocked_ns.fetch_add(static_cast<uint64_t>((Clock::now() - start).count()), std::memory_order_relaxed);
  return sent;
}

}  // namespace

uint64_t input_backlog_drops() {
  std::ifstream in("/proc/net/softnet_stat");
  uint64_t total = 0;
  std::string processed, dropped, rest;
  while (in >> processed >> dropped && std::getline(in, rest)) total += std::stoull(dropped, nullptr, 16);
  return total;
}

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

std::string SendResult::to_json() const {
  std::ostringstream out;
  out << "{\"sent\":" << sent << ",\"seconds\":" << seconds << ",\"rate\":" << std::llround(rate())
      << ",\"cpu_seconds\":" << cpu_seconds << ",\"blocked_seconds\":" << blocked_seconds
      << ",\"possibly_lost\":" << possibly_lost << ",\"reconnects\":" << reconnects
      << ",\"connects_failed\":" << connects_failed;
  if (udp) out << ",\"udp\":true,\"gso\":" << (udp_gso ? "true" : "false") << ",\"backlog_drops\":" << backlog_drops;
  if (relp || avro)
    out << (relp ? ",\"relp\":true" : ",\"avro\":true") << ",\"window\":" << relp_window
        << ",\"acknowledged\":" << acknowledged << ",\"ack_p50_ms\":" << ack_p50_ms << ",\"ack_p99_ms\":" << ack_p99_ms;
  out << ",\"connections\":[";
  for (size_t i = 0; i < connections.size(); ++i) {
    const auto& c = connections[i];
    out << (i ? "," : "") << "\n {\"id\":" << c.id << ",\"sent\":" << c.sent << ",\"possibly_lost\":" << c.possibly_lost
        << ",\"reconnects\":" << c.reconnects << ",\"connects_failed\":" << c.connects_failed
        << ",\"closed_by_receiver\":" << c.closed_by_receiver << ",\"target\":\"" << c.target << "\",\"error\":\""
        << c.error << "\",\"lost\":[";
    for (size_t r = 0; r < c.lost_ranges.size(); ++r)
      out << (r ? "," : "") << "[" << c.lost_ranges[r].first << "," << c.lost_ranges[r].second << "]";
    out << "]}";
  }
  out << "]}\n";
  return out.str();
}

SendResult send_events(const SendOptions& options) {
  if (options.targets.empty()) throw std::invalid_argument("no target");
  if (options.connections < 1) throw std::invalid_argument("--connections must be at least 1");
  if (options.ramp.count() > 0 && options.rate <= 0) throw std::invalid_argument("--ramp needs a --rate to rise to");
  const int threads = options.threads > 0 ? options.threads : std::min(options.connections, 2);

  if (options.tls && options.udp) throw std::invalid_argument("--tls is for TCP, not --udp");
  const std::unique_ptr<TlsClient> tls = options.tls ? std::make_unique<TlsClient>(options.tls_client) : nullptr;
  LiveStats stats;
  std::vector<std::unique_ptr<Connection>> connections;
  for (int i = 0; i < options.connections; ++i) {
    Target target = options.targets[i % options.targets.size()];
    if (!options.from.empty()) target.from = options.from[static_cast<size_t>(i) % options.from.size()];
    auto c = std::make_unique<Connection>(options.first_connection + static_cast<uint32_t>(i), target, options.format);
    if (!c->open(options.udp, tls.get()))
      throw std::runtime_error("cannot connect to " + c->result.target + ": " + c->result.error);
    c->result.error.clear();
    connections.push_back(std::move(c));
  }
  stats.up = options.connections;

  std::atomic<int> running{threads};
  std::atomic<bool> any_write_given_up{false};
  const uint64_t backlog_drops_before = options.udp ? input_backlog_drops() : 0;
  const auto start = Clock::now();
  const auto end = start + options.duration;
  const auto give_up_at = end + options.write_timeout;  // a write still waiting then is given up
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::vector<Connection*> mine;
      for (size_t i = static_cast<size_t>(t); i < connections.size(); i += static_cast<size_t>(threads))
        mine.push_back(connections[i].get());
      const double rate = options.rate / threads;
      const double ramp = std::chrono::duration<double>(options.ramp).count();
      const uint64_t quota =
          options.count ? options.count / threads + (static_cast<uint64_t>(t) < options.count % threads) : 0;
      uint64_t issued = 0;
      std::string buffer;
      std::vector<size_t> ends;  // UDP: where each datagram ends in buffer
      size_t next = 0;
      while (true) {
        const auto now = Clock::now();
        if (now >= end || (quota && issued >= quota)) break;
        size_t chunk = kChunkEvents;
        if (quota) chunk = std::min<uint64_t>(chunk, quota - issued);
        if (rate > 0) {
          const double elapsed = std::chrono::duration<double>(now - start).count();
          // The integral of the rate: a linear rise over the ramp, then flat.
          const double allowed = elapsed < ramp ? rate * elapsed * elapsed / (2 * ramp) : rate * (elapsed - ramp / 2);
          const double tokens = allowed - static_cast<double>(issued);
          // Wait for a worthwhile chunk (about a millisecond's worth) rather than single events.
          const double want = std::min<double>(static_cast<double>(chunk), std::max(1.0, rate / 1000));
          if (tokens < want) {
            std::this_thread::sleep_for(std::chrono::duration<double>(std::min((want - tokens) / rate, 0.01)));
            continue;
          }
          chunk = std::min<size_t>(chunk, static_cast<size_t>(tokens));
        }
        Connection* c = mine[next++ % mine.size()];
        if (c->fd < 0) {
          if (now < c->next_attempt) {
            // Every connection of this thread may be down: do not spin.
            if (std::all_of(mine.begin(), mine.end(), [](Connection* m) { return m->fd < 0; }))
              std::this_thread::sleep_for(std::chrono::milliseconds(10));
            continue;
          }
          if (!c->open(options.udp, tls.get())) {
            ++c->result.connects_failed;
            c->down_as_asked = false;
            c->next_attempt = now + c->backoff;
            c->backoff = std::min(c->backoff * 2, kReconnectMax);
            continue;
          }
          c->backoff = kReconnectMin;
          ++c->result.reconnects;
          stats.reconnects.fetch_add(1);
          stats.up.fetch_add(1);
        }
        if (!options.udp && receiver_closing(c->fd)) {
          // The receiver is shutting down: it reads until we close, or until its grace ends. What
          // it has not acknowledged when we close (or when it resets us) may be lost on the way:
          // wait for the acknowledgements, then close our side and come back once it listens again.
          if (!c->tls) {
            const auto give_up = Clock::now() + kAcknowledgementWaitMax;
            while (c->unacknowledged.update(c->fd) && !c->unacknowledged.empty() && Clock::now() < give_up &&
                   !socket_failed(c->fd))
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
            c->declare_unacknowledged_lost();
          }
          c->close();
          c->next_attempt = now + kReconnectMin;
          c->down_as_asked = true;
          ++c->result.closed_by_receiver;
          stats.up.fetch_sub(1);
          continue;
        }
        buffer.clear();
        ends.clear();
        const uint64_t first = c->writer.next_sequence();
        const bool track = !options.udp && !c->tls;
        c->writer.write(buffer, chunk, options.udp || track ? &ends : nullptr);
        if (track) c->unacknowledged.update(c->fd);
        c->result.sent += chunk;
        issued += chunk;
        if (options.udp) {
          c->gso = c->gso && options.udp_gso;
          const size_t left = send_datagrams(c->fd, buffer, ends, c->gso, c->result.error, stats);
          c->sent_with_gso |= c->gso;
          stats.sent.fetch_add(left, std::memory_order_relaxed);
          if (left < chunk) {
            // The socket stays (nothing to reconnect); what the failed send held did not leave.
            // ECONNREFUSED: an earlier datagram met a closed port, which the kernel reports once.
            c->result.possibly_lost += chunk - left;
            c->result.lost_ranges.emplace_back(first + left, first + chunk - 1);
            if (c->result.lost_ranges.size() == 1 || c->result.lost_ranges.size() % 1000 == 0)
              std::fprintf(stderr, "loadgen: UDP socket %u to %s: send failed: %s (%zu such sends so far)\n",
                           c->result.id, c->result.target.c_str(), c->result.error.c_str(),
                           c->result.lost_ranges.size());
          }
          continue;
        }
        if (!write_counted(*c, buffer, give_up_at, c->result.error, stats)) {
          if (track) c->unacknowledged.update(c->fd);  // the write may have waited long: acknowledged since?
          c->declare_unacknowledged_lost();            // earlier writes the receiver never acknowledged
          c->result.possibly_lost += chunk;
          c->result.lost_ranges.emplace_back(first, first + chunk - 1);
          const bool given_up = Clock::now() >= give_up_at;
          std::fprintf(stderr, "loadgen: connection %u to %s failed: %s%s\n", c->result.id, c->result.target.c_str(),
                       c->result.error.c_str(), given_up ? "" : "; reconnecting");
          if (given_up) {
            any_write_given_up = true;
            c->abandon();  // a write half done: the receiver must not take its cut event as a whole one
          } else {
            c->close();
          }
          c->next_attempt = now + c->backoff;
          c->down_as_asked = false;
          stats.up.fetch_sub(1);
          continue;
        }
        if (track) c->unacknowledged.written(ends, first);
        stats.sent.fetch_add(chunk, std::memory_order_relaxed);
      }
      running.fetch_sub(1);
    });
  }

  std::ofstream csv;
  if (!options.csv_path.empty()) {
    csv.open(options.csv_path);
    csv << "elapsed_s,sent_per_s,sent_total,connections_up,reconnects,blocked_percent\n";
  }
  uint64_t last_total = 0, last_blocked = 0;
  auto last_time = start;
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto now = Clock::now();
    if (now - last_time < std::chrono::seconds(1) && running.load() > 0) continue;
    const uint64_t total = stats.sent.load(), blocked = stats.blocked_ns.load();
    const double span = std::chrono::duration<double>(now - last_time).count();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    const double per_s = (total - last_total) / span;
    const double blocked_percent = 100.0 * (blocked - last_blocked) / 1e9 / span / threads;
    if (options.progress_interval.count())
      std::fprintf(stderr,
                   "loadgen: %7.1fs %10.0f ev/s  total %12llu  up %d/%d  reconnects %llu  blocked in send %3.0f%%\n",
                   elapsed, per_s, static_cast<unsigned long long>(total), stats.up.load(), options.connections,
                   static_cast<unsigned long long>(stats.reconnects.load()), blocked_percent);
    if (csv.is_open())
      csv << elapsed << "," << static_cast<uint64_t>(per_s) << "," << total << "," << stats.up.load() << ","
          << stats.reconnects.load() << "," << blocked_percent << std::endl;
    last_total = total;
    last_blocked = blocked;
    last_time = now;
  }
  for (auto& w : workers) w.join();
  SendResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.cpu_seconds = process_cpu_seconds();
  result.blocked_seconds = stats.blocked_ns.load() / 1e9;
  result.udp = options.udp;
  if (options.udp) result.backlog_drops = input_backlog_drops() - backlog_drops_before;
  for (const auto& c : connections) result.udp_gso |= options.udp && c->sent_with_gso;
  // Plain TCP, once a write was given up (a receiver that stopped reading): what the receivers'
  // kernels have not acknowledged on the other connections may never arrive either, and is
  // declared possibly lost as well. Otherwise the connections close as ever: the kernel delivers
  // what they hold to a receiver that reads.
  if (any_write_given_up)
    for (auto& c : connections) {
      if (c->fd < 0 || c->tls || options.udp) continue;
      c->unacknowledged.update(c->fd);
      c->declare_unacknowledged_lost();
    }
  // TLS: every connection's close_notify and FIN first (2 s in all, even for receivers that read
  // nothing), then up to 2 s in all for their FINs.
  const auto closing_until = Clock::now() + std::chrono::seconds(2);
  for (auto& c : connections)
    if (c->tls) begin_close(c->tls, c->fd, closing_until);
  const auto until = Clock::now() + std::chrono::seconds(2);
  for (auto& c : connections)
    if (c->tls) {
      finish_close(c->tls, c->fd, until);
      c->tls = nullptr;
    }
  for (auto& c : connections) {
    if (c->fd >= 0)
      c->close();
    else if (!c->down_as_asked)
      ++result.failed_for_good;  // still down at the end
    result.sent += c->result.sent;
    result.possibly_lost += c->result.possibly_lost;
    result.reconnects += c->result.reconnects;
    result.connects_failed += c->result.connects_failed;
    result.connections.push_back(c->result);
  }
  return result;
}

}  // namespace sluice::loadgen
