#pragma once
// TLS for a stream source (RFC 5425): the server's OpenSSL context made from the ssl.*
// properties (PEM files, or a Flume keystore in PKCS12), how clients are verified (clientAuth
// against ssl.ca) and which peers are let in (ssl.allowedPeers: certificate fingerprints and
// subject names, RFC 5425 §5.2). reload() reads the files again (SIGHUP): connections opened
// after it use the new certificate, established ones keep theirs.

#include <openssl/ssl.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sources/net/tls_settings.h"

namespace sluice::net {

// Why a TLS connection was refused: the reason label of sluice_source_tls_handshake_failures_total.
enum class TlsFailure {
  timeout,         // the handshake did not complete within ssl.handshakeTimeout
  no_certificate,  // clientAuth = required (or allowedPeers) and the client sent none
  expired,         // its certificate is expired or not yet valid
  untrusted,       // its certificate does not chain to ssl.ca (and its fingerprint is not allowed)
  not_allowed,     // verified, but neither its fingerprint nor its names are in allowedPeers
  protocol,        // no common version or cipher, not TLS at all, a broken record
  revoked,         // its certificate is on its issuer's CRL (ssl.crl)
};
inline constexpr TlsFailure kTlsFailures[] = {TlsFailure::timeout,   TlsFailure::no_certificate, TlsFailure::expired,
                                              TlsFailure::untrusted, TlsFailure::not_allowed,    TlsFailure::protocol,
                                              TlsFailure::revoked};
std::string_view failure_label(TlsFailure failure);

// ssl.allowedPeers: each word a SHA-256 fingerprint ("SHA256:AB:CD:..." or 64 hex digits, colons
// optional) or a name matched against the certificate's subject CN and DNS subjectAltNames.
struct AllowedPeers {
  std::set<std::string> fingerprints;  // 64 lowercase hex digits
  std::set<std::string> names;         // lowercase
  bool empty() const { return fingerprints.empty() && names.empty(); }
};
// A fingerprint's 64 lowercase hex digits, or nothing if the word is not one.
std::optional<std::string> parse_fingerprint(std::string_view word);
// True for a word that says it is a fingerprint ("SHA256:...", or hex digits and colons only).
bool looks_like_fingerprint(std::string_view word);
AllowedPeers parse_allowed_peers(const std::vector<std::string>& words);

// The SHA-256 fingerprint of a certificate (64 lowercase hex digits) and its subject, for logs.
std::string fingerprint_of(X509* certificate);
std::string subject_of(X509* certificate);

class TlsContext {
 public:
  // Reads and checks the files; throws config::ConfigError naming the property, the file and
  // OpenSSL's reason.
  TlsContext(const config::ComponentConfig& component, const TlsSettings& config);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A server-side SSL for a new connection, on the context loaded last.
  SSL* new_session() const;
  // Reads the files again. On an error the running context stays; returns the error ("" if none).
  std::string reload();
  // The files it reads (for a FileWatch), and when the certificate it serves expires (seconds
  // since the epoch; 0 if unknown).
  std::vector<std::string> files() const;
  int64_t not_after() const { return not_after_.load(std::memory_order_relaxed); }
  // After a completed handshake: whether clientAuth and allowedPeers let this peer in.
  std::optional<TlsFailure> admit(SSL* ssl) const;
  // After a failed handshake: why (from the verification and OpenSSL's error queue, which it clears).
  static TlsFailure classify_failure(SSL* ssl);

 private:
  SSL_CTX* build() const;  // throws config::ConfigError
  // build()'s steps: versions, options and ciphers; the certificate and key (a keystore or PEM
  // files); the client's verification (CA, CRL, the mode).
  void set_protocols(SSL_CTX* ctx) const;
  void load_identity(SSL_CTX* ctx) const;
  void load_client_verification(SSL_CTX* ctx) const;
  // Throws the component's error for `property`, with what OpenSSL said of it.
  [[noreturn]] void fail_with_openssl(std::string_view property, const std::string& what) const;
  static int verify(int preverified, X509_STORE_CTX* store);

  const config::ComponentConfig component_;
  const TlsSettings& config_;
  const AllowedPeers allowed_;
  mutable std::mutex mutex_;  // guards context_, swapped by reload()
  SSL_CTX* context_ = nullptr;
  std::atomic<int64_t> not_after_{0};
};

}  // namespace sluice::net
