#pragma once
// sluice-loadgen --tls: the client side of syslog over TLS (RFC 5425) for the sender's
// connections: one context for the run (--cert/--key to show a client certificate, --ca to
// verify the server), a handshake per connection on its blocking socket, then whole writes.

#include <openssl/ssl.h>

#include <chrono>
#include <string>
#include <string_view>

namespace sluice::loadgen {

struct TlsClientOptions {
  std::string cert, key;  // a client certificate (PEM), if the receiver asks for one
  std::string ca;         // verify the server against these CAs (PEM); empty: do not verify
};

class TlsClient {
 public:
  // Throws std::invalid_argument naming the file OpenSSL could not load.
  explicit TlsClient(const TlsClientOptions& options);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  // The handshake on a connected blocking socket; nullptr (and why, in error) if it failed.
  SSL* connect(int fd, std::string& error) const;

 private:
  SSL_CTX* context_;
};

// Why a write (plain or TLS) gave up: its deadline came while the receiver took nothing.
inline constexpr const char* kWriteDeadlinePassed =
    "the receiver took nothing more before the write's deadline (the run's end and --write-timeout)";

// Writes all of `data` through the session; false (and why, in error) if it failed, or if
// `give_up_at` came first (the socket's writes wake while they wait: wake_blocked_writes).
bool write_all(SSL* ssl, std::string_view data, std::chrono::steady_clock::time_point give_up_at, std::string& error);

// Ending a session as TLS asks, so that nothing the receiver sent is left unread (a socket closed
// with unread bytes resets the connection and drops what we had written but the kernel not yet
// sent): begin_close sends close_notify (waiting for room in the socket until `until` at most) and
// our FIN; finish_close reads until the receiver's FIN or `until`, then frees `ssl`. Many
// connections begin together and then share one deadline.
void begin_close(SSL* ssl, int fd, std::chrono::steady_clock::time_point until);
void finish_close(SSL* ssl, int fd, std::chrono::steady_clock::time_point until);

}  // namespace sluice::loadgen
