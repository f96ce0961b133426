#include "loadgen/tls_client.h"

#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>

#include <stdexcept>

namespace sluice::loadgen {
namespace {

std::string openssl_error(std::string_view what) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  char line[256] = "no reason given";
  if (code) ERR_error_string_n(code, line, sizeof line);
  return std::string(what) + ": " + line;
}

}  // namespace

TlsClient::TlsClient(const TlsClientOptions& options) : context_(SSL_CTX_new(TLS_client_method())) {
  if (!context_) throw std::invalid_argument(openssl_error("TLS"));
  SSL_CTX_set_min_proto_version(context_, TLS1_2_VERSION);
  auto fail = [&](const std::string& what) {
    const std::string message = openssl_error(what);
    SSL_CTX_free(context_);
    throw std::invalid_argument(message);
  };
  if (!options.cert.empty() && SSL_CTX_use_certificate_chain_file(context_, options.cert.c_str()) != 1)
    fail("--cert " + options.cert);
  if (!options.key.empty() && SSL_CTX_use_PrivateKey_file(context_, options.key.c_str(), SSL_FILETYPE_PEM) != 1)
    fail("--key " + options.key);
  if (!options.ca.empty()) {
    if (SSL_CTX_load_verify_locations(context_, options.ca.c_str(), nullptr) != 1) fail("--ca " + options.ca);
    SSL_CTX_set_verify(context_, SSL_VERIFY_PEER, nullptr);
  }
}

TlsClient::~TlsClient() { SSL_CTX_free(context_); }

SSL* TlsClient::connect(int fd, std::string& error) const {
  // Bounded: a receiver that is not TLS (or is stuck) must not hold the handshake for ever.
  timeval bound{10, 0}, none{0, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
  SSL* ssl = SSL_new(context_);
  const bool connected = ssl && SSL_set_fd(ssl, fd) == 1 && SSL_connect(ssl) == 1;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
  if (connected) return ssl;
  error = openssl_error("TLS handshake (10 s at most)");
  SSL_free(ssl);
  return nullptr;
}

bool write_all(SSL* ssl, std::string_view data, std::chrono::steady_clock::time_point give_up_at, std::string& error) {
  while (!data.empty()) {
    size_t written = 0;
    ERR_clear_error();  // SSL_get_error below must see this call's errors, not an earlier one's
    if (SSL_write_ex(ssl, data.data(), data.size(), &written) == 1) {
      data.remove_prefix(written);
      continue;
    }
    // A write that waited its second for a receiver taking nothing: tried again with the same
    // bytes, as OpenSSL requires, until the deadline.
    if (SSL_get_error(ssl, 0) != SSL_ERROR_WANT_WRITE) {
      error = openssl_error("TLS write");
      return false;
    }
    if (std::chrono::steady_clock::now() >= give_up_at) {
      error = std::string("TLS write: ") + kWriteDeadlinePassed;
      return false;
    }
  }
  return true;
}

void begin_close(SSL* ssl, int fd, std::chrono::steady_clock::time_point until) {
  // close_notify waits for room in the socket at most until `until` (a millisecond once it is past),
  // so that many connections to a receiver that reads nothing close in bounded time.
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(until - std::chrono::steady_clock::now());
  const auto wait = std::clamp(left, std::chrono::microseconds(1000), std::chrono::microseconds(1'000'000));
  const timeval bound{static_cast<time_t>(wait.count() / 1'000'000),
                      static_cast<suseconds_t>(wait.count() % 1'000'000)};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
  SSL_shutdown(ssl);
  ERR_clear_error();  // a close_notify that did not fit leaves nothing for the next session's calls
  ::shutdown(fd, SHUT_WR);
}

void finish_close(SSL* ssl, int fd, std::chrono::steady_clock::time_point until) {
  char discard[4096];
  for (auto now = std::chrono::steady_clock::now(); now < until; now = std::chrono::steady_clock::now()) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    if (::recv(fd, discard, sizeof discard, 0) <= 0) break;  // the receiver's FIN (or an error): done
  }
  SSL_free(ssl);
}

}  // namespace sluice::loadgen
