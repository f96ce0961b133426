#include "sinks/avro/avro_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

namespace sluice::avro {
namespace {

// An answer is a status or a short error; NONE carries the protocol's text.
constexpr size_t kMaxAnswer = 1 << 20;
// Java's client sends a request in buffers of this size; ours look the same on the wire.
constexpr size_t kRequestBuffer = 8192;

int poll_timeout_ms(Deadline deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 1000));  // re-read at least every second
}

bool is_address(const std::string& host) {
  in6_addr any;
  return inet_pton(AF_INET, host.c_str(), &any) == 1 || inet_pton(AF_INET6, host.c_str(), &any) == 1;
}

}  // namespace

std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  char line[256] = "no reason given";
  if (code) ERR_error_string_n(code, line, sizeof line);
  return line;
}

std::string_view outcome_label(CallOutcome outcome) {
  switch (outcome) {
    case CallOutcome::ok: return "ok";
    case CallOutcome::refused: return "refused";
    case CallOutcome::unreachable: return "unreachable";
    case CallOutcome::no_answer: return "no_answer";
  }
  return "unknown";
}

AvroClient::AvroClient(AvroClientSettings settings) : settings_(std::move(settings)) {}

AvroClient::~AvroClient() { close(); }

void AvroClient::close() {
  if (ssl_) SSL_free(ssl_);  // no close_notify: the server reads our FIN as the end either way
  ssl_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  deflater_.reset();
  inflater_.reset();
  decoder_.reset();
  connected_at_ = {};
}

bool AvroClient::wait(short events, Deadline deadline, std::string& why) const {
  while (true) {
    if (settings_.stop) deadline = std::min(deadline, settings_.stop->get());
    if (Clock::now() >= deadline) {
      why = "timed out";
      return false;
    }
    pollfd p{fd_, events, 0};
    const int ready = ::poll(&p, 1, poll_timeout_ms(deadline));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) {
      why = std::string("poll: ") + std::strerror(errno);
      return false;
    }
  }
}

struct NameLookup {
  std::mutex mutex;
  std::condition_variable resolved;
  bool done = false;
  int error = 0;
  addrinfo* addresses = nullptr;
  bool no_thread = false;  // none could be started to look it up
  ~NameLookup() {
    if (addresses) freeaddrinfo(addresses);
  }
};

namespace {

// The addresses of `host`: at once for an address; for a name, from a resolver thread waited for
// until `deadline` at most (a dead DNS server must not hold a stopping sink). A lookup given up
// finishes on its own and frees what it found. `pending`: a lookup of the same name still running from an earlier
// connect (a dead DNS server): waited for again rather than another started beside it.
std::shared_ptr<NameLookup> resolve(const std::string& host, const std::string& port, Deadline deadline,
                                    const StopDeadline* stop, std::shared_ptr<NameLookup>& pending) {
  auto r = std::make_shared<NameLookup>();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &r->addresses) == 0) {
    r->done = true;
    return r;
  }
  if (pending) {
    r = std::move(pending);
  } else {
    try {
      std::thread([r, host, port] {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        const int error = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
        std::lock_guard lock(r->mutex);
        r->error = error;
        r->addresses = found;
        r->done = true;
        r->resolved.notify_all();
      }).detach();
    } catch (const std::system_error&) {  // no thread to be had: this try fails, the next tries again
      r->done = true;
      r->no_thread = true;
      return r;
    }
  }
  std::unique_lock lock(r->mutex);
  while (!r->done) {
    const Deadline until = std::min(deadline, stop ? stop->get() : Deadline::max());
    if (Clock::now() >= until) {
      pending = r;  // still running: the next connect waits for it
      break;
    }
    r->resolved.wait_until(lock, std::min(until, Clock::now() + std::chrono::seconds(1)));
  }
  return r;
}

}  // namespace

std::string AvroClient::connect(Deadline deadline) {
  close();
  const std::string port = std::to_string(settings_.port);
  const std::shared_ptr<NameLookup> resolution =
      resolve(settings_.host, port, deadline, settings_.stop, pending_lookup_);
  std::unique_lock lock(resolution->mutex);
  if (!resolution->done) return "cannot resolve " + settings_.host + ": no answer in time";
  if (resolution->no_thread) return "cannot resolve " + settings_.host + ": no thread to look it up on";
  if (resolution->error != 0) return "cannot resolve " + settings_.host + ": " + gai_strerror(resolution->error);
  const addrinfo* found = resolution->addresses;
  std::string why = "no address for " + settings_.host;
  for (const addrinfo* a = found; a && fd_ < 0; a = a->ai_next) {
    fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd_ < 0) {
      why = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    int error = ::connect(fd_, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (error == EINPROGRESS) {
      socklen_t length = sizeof error;
      error =
          wait(POLLOUT, deadline, why) && ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) == 0 ? error : -1;
    }
    if (error != 0) {
      if (error > 0) why = std::strerror(error);
      ::close(fd_);
      fd_ = -1;
    }
  }
  lock.unlock();
  if (fd_ < 0) return "connect to " + settings_.host + ":" + port + ": " + why;
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (settings_.tls) {
    if (std::string failed = tls_handshake(deadline); !failed.empty()) {
      close();
      return "TLS with " + settings_.host + ":" + port + ": " + failed;
    }
  }
  if (settings_.deflate_level) {
    deflater_ = std::make_unique<DeflateStream>(*settings_.deflate_level);
    inflater_ = std::make_unique<InflateStream>();
    if (!deflater_->ok() || !inflater_->ok()) {
      close();
      return "zlib could not allocate its state";
    }
  }
  decoder_ = std::make_unique<FrameDecoder>(kMaxAnswer);
  inflated_.clear();
  handshaken_ = false;
  serial_ = 0;
  connected_at_ = Clock::now();
  ++connections_made_;
  return {};
}

std::string AvroClient::tls_handshake(Deadline deadline) {
  ssl_ = SSL_new(settings_.tls.get());
  if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) return openssl_reason();
  if (!is_address(settings_.host)) SSL_set_tlsext_host_name(ssl_, settings_.host.c_str());  // SNI
  while (true) {
    ERR_clear_error();  // SSL_get_error reads the queue: nothing of an earlier failure may be in it
    const int result = SSL_connect(ssl_);
    if (result == 1) return {};
    const int error = SSL_get_error(ssl_, result);
    std::string why;
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      if (!wait(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, why)) return "the handshake " + why;
      continue;
    }
    const long verified = SSL_get_verify_result(ssl_);
    if (verified != X509_V_OK) return std::string("its certificate: ") + X509_verify_cert_error_string(verified);
    return error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 ? "the connection closed during the handshake"
                                                               : openssl_reason();
  }
}

bool AvroClient::write_all(std::string_view bytes, Deadline deadline, std::string& why) {
  std::string compressed;
  if (deflater_) {
    deflater_->compress(bytes, compressed);
    bytes = compressed;
  }
  while (!bytes.empty()) {
    if (ssl_) {
      size_t written = 0;
      ERR_clear_error();
      const int result = SSL_write_ex(ssl_, bytes.data(), bytes.size(), &written);
      if (result == 1) {
        bytes.remove_prefix(written);
        continue;
      }
      const int error = SSL_get_error(ssl_, result);
      if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) {
        why = "TLS write: " + openssl_reason();
        return false;
      }
      if (!wait(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, why)) return false;
      continue;
    }
    const ssize_t written = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (written > 0) {
      bytes.remove_prefix(static_cast<size_t>(written));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait(POLLOUT, deadline, why)) return false;
    } else if (errno != EINTR) {
      why = std::string("write: ") + std::strerror(errno);
      return false;
    }
  }
  return true;
}

ssize_t AvroClient::read_some(char* into, size_t size, Deadline deadline, std::string& why) {
  while (true) {
    if (ssl_) {
      size_t got = 0;
      ERR_clear_error();
      const int result = SSL_read_ex(ssl_, into, size, &got);
      if (result == 1) return static_cast<ssize_t>(got);
      const int error = SSL_get_error(ssl_, result);
      if (error == SSL_ERROR_ZERO_RETURN) return 0;
      if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) {
        if (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return 0;  // closed without close_notify
        why = "TLS read: " + openssl_reason();
        return -1;
      }
      if (!wait(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, why)) return -1;
      continue;
    }
    const ssize_t got = ::recv(fd_, into, size, 0);
    if (got >= 0) return got;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait(POLLIN, deadline, why)) return -1;
    } else if (errno != EINTR) {
      why = std::string("read: ") + std::strerror(errno);
      return -1;
    }
  }
}

std::optional<Frame> AvroClient::read_frame(Deadline deadline, std::string& why) {
  std::vector<Frame> frames;
  char buffer[16384];
  while (frames.empty()) {
    const ssize_t got = read_some(buffer, sizeof buffer, deadline, why);
    if (got <= 0) {
      if (got == 0) why = "the collector closed the connection";
      return std::nullopt;
    }
    const std::string_view bytes(buffer, static_cast<size_t>(got));
    if (!inflater_) {
      why = decoder_->feed(bytes, frames);
    } else {
      std::string broken;
      why = inflater_->inflate(bytes, 64 * 1024, [&](std::string_view piece) {
        broken = decoder_->feed(piece, frames);
        return broken.empty();
      });
      if (why.empty()) why = broken;
    }
    if (!why.empty()) return std::nullopt;
  }
  return std::move(frames.front());  // an answer per request: nothing follows it
}

std::optional<CallResponse> AvroClient::exchange(const std::string& request, Deadline deadline, bool& sent,
                                                 std::string& why) {
  const auto serial = static_cast<int32_t>(serial_++);  // wraps, as Java's int does
  sent = true;                                          // from its first byte on, the collector may read it whole
  if (!write_all(encode_frame(serial, request, kRequestBuffer), deadline, why)) return std::nullopt;
  std::optional<Frame> frame = read_frame(deadline, why);
  if (!frame) return std::nullopt;
  if (frame->serial != serial) {
    why = "an answer to call " + std::to_string(frame->serial) + ", not to " + std::to_string(serial);
    return std::nullopt;
  }
  std::optional<CallResponse> response = read_response(frame->message, !handshaken_, why);
  if (!response) why = "an answer that is not Avro RPC's: " + why;
  return response;
}

// A kept connection the collector has closed meanwhile (its idleTimeout, a restart): its FIN is
// waiting to be read. Found before a call, it is no reason to count the call's events as maybe stored.
bool AvroClient::closed_by_peer() const {
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
  char byte;
  return ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

CallResult AvroClient::append_batch(std::string_view events, size_t count, Deadline deadline) {
  const auto now = Clock::now();
  if (fd_ >= 0 && closed_by_peer()) close();
  if (fd_ < 0 || !decoder_) {
    if (std::string why = connect(std::min(deadline, now + settings_.connect_timeout)); !why.empty())
      return {CallOutcome::unreachable, std::move(why)};
  }
  const Deadline answer_by = std::min(deadline, Clock::now() + settings_.request_timeout);
  // NONE: the server does not know our protocol by its hash; the call is not made, and Java's
  // client sends it again with the protocol's text.
  for (const bool with_protocol : {false, true}) {
    bool sent = false;
    std::string why;
    const std::string request = append_batch_request(events, count, !handshaken_, with_protocol);
    const std::optional<CallResponse> response = exchange(request, answer_by, sent, why);
    if (!response) {
      close();
      return {sent ? CallOutcome::no_answer : CallOutcome::unreachable, std::move(why)};
    }
    if (response->handshake == HandshakeMatch::none) continue;
    if (response->handshake) handshaken_ = true;
    if (response->status == Status::ok) return {CallOutcome::ok, {}};
    close();  // as Flume's sink: a failed call ends its connection
    if (!response->status) return {CallOutcome::refused, "the collector answered with an error: " + response->error};
    return {CallOutcome::refused, response->status == Status::failed
                                      ? "the collector answered FAILED (a channel of it is full, or it is stopping)"
                                      : "the collector answered UNKNOWN"};
  }
  close();
  return {CallOutcome::refused, "the collector does not speak Flume's protocol (its handshake matched none)"};
}

}  // namespace sluice::avro
