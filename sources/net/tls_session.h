#pragma once
// One TLS connection's engine over memory buffers: the io thread feeds it what the socket gave,
// takes the decrypted bytes, and writes out what it must send (handshake, alerts, close_notify).
// Nothing here touches the socket, so a slow handshake (a client sending one byte a second)
// holds no thread: it is just a connection whose reads have not completed a message yet.

#include <openssl/ssl.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sources/net/tls_context.h"

namespace sluice::net {

class TlsSession {
 public:
  enum class State {
    handshaking,
    established,  // data flows
    closed,       // the client sent close_notify: its stream ended cleanly
    failed,       // refused or broken: failure() says why; close the connection after sending output
  };

  explicit TlsSession(SSL* ssl);  // takes it over
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Takes `cipher` (may be empty: go on with what is buffered). While handshaking, stops when
  // the handshake completes: the caller admits the peer (TlsContext::admit) and feeds again
  // (or refuses), so that no byte of a peer not yet let in is decrypted. Once established, each
  // decrypted chunk goes to `plain` (through `scratch`, reused). What must be sent is appended
  // to `out`.
  State feed(std::string_view cipher, const std::function<void(std::string_view)>& plain, std::string& out,
             std::vector<char>& scratch);
  // Encrypts `plain` (a protocol's replies, once established) into records appended to `out`.
  // False if the session cannot send (not established).
  bool write(std::string_view plain, std::string& out);
  // Our close_notify, into `out` (for a peer that reads: a protocol's session ending cleanly).
  void close_notify(std::string& out);
  // Refused after the handshake (admit said no): closes with an alert in `out`.
  void refuse(TlsFailure why, std::string& out);

  State state() const { return state_; }
  bool handshaking() const { return state_ == State::handshaking; }
  std::optional<TlsFailure> failure() const { return failure_; }
  SSL* ssl() { return ssl_; }
  // Bytes received but not yet a whole TLS record (what a connection cut now leaves unread).
  size_t buffered() const;
  // The client's certificate subject, for log lines ("no certificate" if it sent none).
  std::string peer_subject() const;

 private:
  void take_output(std::string& out);
  void fail(TlsFailure why);
  void shrink_input();

  SSL* ssl_;
  BIO* in_;   // what the socket gave, for OpenSSL to read
  BIO* out_;  // what OpenSSL wrote, for the socket
  State state_ = State::handshaking;
  std::optional<TlsFailure> failure_;
};

}  // namespace sluice::net
