#include "sources/net/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

namespace sluice::net {
namespace {

// The notAfter of the certificate a context serves, in seconds since the epoch (0: none).
int64_t expiry_of(SSL_CTX* ctx) {
  X509* certificate = SSL_CTX_get0_certificate(ctx);
  if (!certificate) return 0;
  tm when{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &when) != 1) return 0;
  return static_cast<int64_t>(timegm(&when));
}

// OpenSSL's reasons for what failed last, one line ("" if its queue is empty); clears the queue.
std::string openssl_errors() {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    char line[256];
    ERR_error_string_n(code, line, sizeof line);
    text += (text.empty() ? "" : "; ") + std::string(line);
  }
  return text;
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};

// The verification error that refused a client, kept with its SSL for classify_failure().
int verify_error_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

bool is_validity_error(int error) {
  return error == X509_V_ERR_CERT_HAS_EXPIRED || error == X509_V_ERR_CERT_NOT_YET_VALID;
}

}  // namespace

std::string_view failure_label(TlsFailure failure) {
  switch (failure) {
    case TlsFailure::timeout: return "timeout";
    case TlsFailure::no_certificate: return "no_certificate";
    case TlsFailure::expired: return "expired";
    case TlsFailure::untrusted: return "untrusted";
    case TlsFailure::not_allowed: return "not_allowed";
    case TlsFailure::protocol: return "protocol";
    case TlsFailure::revoked: return "revoked";
  }
  return "protocol";
}

std::optional<std::string> parse_fingerprint(std::string_view word) {
  std::string text = lowercase(word);
  for (std::string_view prefix : {"sha256:", "sha-256:"})
    if (text.starts_with(prefix)) text = text.substr(prefix.size());
  if (text.size() > 64 && text.find(':') == std::string::npos) return std::nullopt;
  std::string digits;
  for (char c : text) {
    if (c == ':') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    digits += c;
  }
  if (digits.size() != 64) return std::nullopt;
  return digits;
}

bool looks_like_fingerprint(std::string_view word) {
  const std::string text = lowercase(word);
  if (text.starts_with("sha")) return text.find(':') != std::string::npos;  // SHA256:..., SHA1:...
  return text.size() >= 32 &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isxdigit(c) || c == ':'; });
}

AllowedPeers parse_allowed_peers(const std::vector<std::string>& words) {
  AllowedPeers peers;
  for (const std::string& word : words) {
    if (auto fingerprint = parse_fingerprint(word))
      peers.fingerprints.insert(*fingerprint);
    else
      peers.names.insert(lowercase(word));
  }
  return peers;
}

std::string fingerprint_of(X509* certificate) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!certificate || X509_digest(certificate, EVP_sha256(), digest, &length) != 1) return "";
  static const char* hex = "0123456789abcdef";
  std::string text;
  for (unsigned int i = 0; i < length; ++i) {
    text += hex[digest[i] >> 4];
    text += hex[digest[i] & 15];
  }
  return text;
}

std::string subject_of(X509* certificate) {
  if (!certificate) return "no certificate";
  char line[512];
  X509_NAME_oneline(X509_get_subject_name(certificate), line, sizeof line);
  return line;
}

TlsContext::TlsContext(const config::ComponentConfig& component, const TlsSettings& config)
    : component_(component), config_(config), allowed_(parse_allowed_peers(config.ssl_allowed_peers)) {
  for (const std::string& word : config_.ssl_allowed_peers)
    if (looks_like_fingerprint(word) && !parse_fingerprint(word))
      component_.fail("ssl.allowedPeers", "\"" + word +
                                              "\" is not a SHA-256 fingerprint (SHA256: and 32 bytes in hex, e.g. from "
                                              "openssl x509 -noout -fingerprint -sha256)");
  if (config_.ssl_client_auth != ClientAuth::none && config_.ssl_ca.empty() && allowed_.fingerprints.empty())
    component_.fail("ssl.clientAuth",
                    "needs something to verify client certificates against: ssl.ca, or fingerprints in "
                    "ssl.allowedPeers");
  context_ = build();
  not_after_ = expiry_of(context_);
}

TlsContext::~TlsContext() { SSL_CTX_free(context_); }

SSL_CTX* TlsContext::build() const {
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_server_method()), &SSL_CTX_free);
  if (!ctx) throw config::ConfigError("TLS: cannot create a context: " + openssl_errors());
  SSL_CTX_set_app_data(ctx.get(), const_cast<TlsContext*>(this));
  set_protocols(ctx.get());
  load_identity(ctx.get());
  if (config_.ssl_client_auth != ClientAuth::none) load_client_verification(ctx.get());
  ERR_clear_error();
  return ctx.release();
}

void TlsContext::fail_with_openssl(std::string_view property, const std::string& what) const {
  const std::string why = openssl_errors();
  component_.fail(property, what + (why.empty() ? "" : ": " + why));
}

void TlsContext::set_protocols(SSL_CTX* ctx) const {
  // Versions: the lowest and highest of those listed (only 1.2 and 1.3 exist here).
  const int lowest = (config_.ssl_protocols & tls_1_2) ? TLS1_2_VERSION : TLS1_3_VERSION;
  const int highest = (config_.ssl_protocols & tls_1_3) ? TLS1_3_VERSION : TLS1_2_VERSION;
  SSL_CTX_set_min_proto_version(ctx, lowest);
  SSL_CTX_set_max_proto_version(ctx, highest);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // Idle connections (thousands of devices) keep no 16 KiB buffers.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  // No TLS 1.3 session tickets: they are the only bytes a server sends after the handshake, and a
  // syslog sender never reads. A socket closed with unread bytes sends a reset instead of a FIN,
  // and the kernel drops what the sender had written but not yet sent: the tail of its stream.
  SSL_CTX_set_num_tickets(ctx, 0);
  // TLS 1.2 sessions (Java senders cache them) are resumed; OpenSSL's manual asks servers that
  // verify clients to give their sessions an id context, so that one source's are never another's.
  const std::string session_context = "sluice:" + component_.key_prefix;
  SSL_CTX_set_session_id_context(
      ctx, reinterpret_cast<const unsigned char*>(session_context.data()),
      static_cast<unsigned>(std::min<size_t>(session_context.size(), SSL_MAX_SID_CTX_LENGTH)));
  if (!config_.ssl_ciphers.empty() && SSL_CTX_set_cipher_list(ctx, config_.ssl_ciphers.c_str()) != 1)
    fail_with_openssl(config_.cipher_property.empty() ? "ssl.ciphers" : config_.cipher_property,
                      "OpenSSL accepts no cipher of \"" + config_.ssl_ciphers + "\"");
  if (!config_.ssl_cipher_suites.empty() && SSL_CTX_set_ciphersuites(ctx, config_.ssl_cipher_suites.c_str()) != 1)
    fail_with_openssl(config_.cipher_property.empty() ? "ssl.cipherSuites" : config_.cipher_property,
                      "OpenSSL accepts no TLS 1.3 suite of \"" + config_.ssl_cipher_suites + "\"");
}

void TlsContext::load_identity(SSL_CTX* ctx) const {
  // The password of an encrypted key, asked for by OpenSSL while it reads the file.
  SSL_CTX_set_default_passwd_cb_userdata(ctx, const_cast<std::string*>(&config_.ssl_key_password));
  SSL_CTX_set_default_passwd_cb(ctx, [](char* buffer, int size, int, void* password) {
    const auto* text = static_cast<const std::string*>(password);
    const int length = std::min<int>(size, static_cast<int>(text->size()));
    std::copy_n(text->data(), length, buffer);
    return length;
  });
  if (!config_.keystore.empty()) {
    std::unique_ptr<FILE, FileCloser> file(std::fopen(config_.keystore.c_str(), "rb"));
    if (!file) fail_with_openssl("keystore", "cannot read " + config_.keystore);
    std::unique_ptr<PKCS12, decltype(&PKCS12_free)> p12(d2i_PKCS12_fp(file.get(), nullptr), &PKCS12_free);
    if (!p12) fail_with_openssl("keystore", config_.keystore + " is not a PKCS12 file");
    EVP_PKEY* key = nullptr;
    X509* certificate = nullptr;
    STACK_OF(X509)* chain = nullptr;
    if (PKCS12_parse(p12.get(), config_.keystore_password.c_str(), &key, &certificate, &chain) != 1)
      fail_with_openssl("keystore-password", "cannot open " + config_.keystore + " (wrong password?)");
    const bool used =
        key && certificate && SSL_CTX_use_certificate(ctx, certificate) == 1 && SSL_CTX_use_PrivateKey(ctx, key) == 1;
    for (int i = 0; used && chain && i < sk_X509_num(chain); ++i) SSL_CTX_add1_chain_cert(ctx, sk_X509_value(chain, i));
    EVP_PKEY_free(key);
    X509_free(certificate);
    sk_X509_pop_free(chain, X509_free);
    if (!used) fail_with_openssl("keystore", config_.keystore + " holds no certificate with its key");
  } else {
    if (SSL_CTX_use_certificate_chain_file(ctx, config_.ssl_certificate.c_str()) != 1)
      fail_with_openssl("ssl.certificate", "cannot load " + config_.ssl_certificate);
    if (SSL_CTX_use_PrivateKey_file(ctx, config_.ssl_key.c_str(), SSL_FILETYPE_PEM) != 1) {
      const unsigned long error = ERR_peek_last_error();
      if (ERR_GET_LIB(error) == ERR_LIB_X509 && ERR_GET_REASON(error) == X509_R_KEY_VALUES_MISMATCH)
        fail_with_openssl("ssl.key", config_.ssl_key + ": the private key does not match the certificate");
      fail_with_openssl("ssl.key",
                        "cannot load " + config_.ssl_key +
                            (config_.ssl_key_password.empty() ? " (if it is encrypted, give ssl.keyPassword)" : ""));
    }
  }
  if (SSL_CTX_check_private_key(ctx) != 1)
    fail_with_openssl(config_.keystore.empty() ? "ssl.key" : "keystore",
                      "the private key does not match the certificate");
}

void TlsContext::load_client_verification(SSL_CTX* ctx) const {
  if (!config_.ssl_ca.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, config_.ssl_ca.c_str(), nullptr) != 1)
      fail_with_openssl("ssl.ca", "cannot load " + config_.ssl_ca);
    // The names of the CAs we trust, sent with the certificate request, so that a client with
    // several certificates picks the right one.
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(config_.ssl_ca.c_str()))
      SSL_CTX_set_client_CA_list(ctx, names);
  }
  if (!config_.ssl_crl.empty()) {
    // Revocation of the client's own certificate (its issuer's CRL). A new context at each reload
    // also forgets the TLS 1.2 sessions of before, so that a client revoked since cannot resume one.
    std::unique_ptr<FILE, FileCloser> file(std::fopen(config_.ssl_crl.c_str(), "r"));
    if (!file) fail_with_openssl("ssl.crl", "cannot open " + config_.ssl_crl + ": " + std::strerror(errno));
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    int loaded = 0;
    while (X509_CRL* crl = PEM_read_X509_CRL(file.get(), nullptr, nullptr, nullptr)) {
      X509_STORE_add_crl(store, crl);
      X509_CRL_free(crl);
      ++loaded;
    }
    ERR_clear_error();  // the file's end reads as an error
    if (loaded == 0) fail_with_openssl("ssl.crl", config_.ssl_crl + " holds no CRL (PEM: -----BEGIN X509 CRL-----)");
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
  }
  int mode = SSL_VERIFY_PEER;
  if (config_.ssl_client_auth == ClientAuth::required) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  SSL_CTX_set_verify(ctx, mode, &TlsContext::verify);
}

// A certificate that does not chain to ssl.ca is still let in when its own fingerprint is in
// allowedPeers (RFC 5425 §5.2: self-signed certificates known by fingerprint); never one that is
// expired or not yet valid. The error that refuses is kept for classify_failure().
int TlsContext::verify(int preverified, X509_STORE_CTX* store) {
  if (preverified) return 1;
  auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  const auto* self = static_cast<const TlsContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  const int error = X509_STORE_CTX_get_error(store);
  if (!is_validity_error(error) && error != X509_V_ERR_CERT_REVOKED &&
      self->allowed_.fingerprints.count(fingerprint_of(X509_STORE_CTX_get0_cert(store))))
    return 1;
  if (!SSL_get_ex_data(ssl, verify_error_index()))
    SSL_set_ex_data(ssl, verify_error_index(), reinterpret_cast<void*>(static_cast<intptr_t>(error)));
  return 0;
}

SSL* TlsContext::new_session() const {
  std::lock_guard lock(mutex_);
  return SSL_new(context_);
}

std::string TlsContext::reload() {
  try {
    SSL_CTX* fresh = build();
    std::lock_guard lock(mutex_);
    SSL_CTX_free(context_);  // sessions made from it hold references of their own
    context_ = fresh;
    not_after_ = expiry_of(fresh);
    return "";
  } catch (const config::ConfigError& e) {
    return e.what();
  }
}

std::vector<std::string> TlsContext::files() const {
  std::vector<std::string> paths;
  for (const std::string* path :
       {&config_.ssl_certificate, &config_.ssl_key, &config_.ssl_ca, &config_.ssl_crl, &config_.keystore})
    if (!path->empty()) paths.push_back(*path);
  return paths;
}

std::optional<TlsFailure> TlsContext::admit(SSL* ssl) const {
  X509* certificate = SSL_get0_peer_certificate(ssl);
  if (!certificate) {
    if (config_.ssl_client_auth == ClientAuth::required || !allowed_.empty()) return TlsFailure::no_certificate;
    return std::nullopt;
  }
  if (allowed_.empty() || allowed_.fingerprints.count(fingerprint_of(certificate))) return std::nullopt;
  // Names: the subject's common name and the DNS subjectAltNames, compared without case.
  X509_NAME* subject = X509_get_subject_name(certificate);
  for (int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
    const ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
    const std::string_view name(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                                static_cast<size_t>(ASN1_STRING_length(value)));
    if (allowed_.names.count(lowercase(name))) return std::nullopt;
  }
  auto* alt_names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  bool found = false;
  for (int i = 0; alt_names && !found && i < sk_GENERAL_NAME_num(alt_names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(alt_names, i);
    if (name->type != GEN_DNS) continue;
    const std::string_view dns(reinterpret_cast<const char*>(ASN1_STRING_get0_data(name->d.dNSName)),
                               static_cast<size_t>(ASN1_STRING_length(name->d.dNSName)));
    found = allowed_.names.count(lowercase(dns)) > 0;
  }
  GENERAL_NAMES_free(alt_names);
  if (found) return std::nullopt;
  return TlsFailure::not_allowed;
}

TlsFailure TlsContext::classify_failure(SSL* ssl) {
  const auto verify_error = static_cast<int>(reinterpret_cast<intptr_t>(SSL_get_ex_data(ssl, verify_error_index())));
  const unsigned long first = ERR_peek_error();
  ERR_clear_error();
  if (verify_error == X509_V_ERR_CERT_REVOKED) return TlsFailure::revoked;
  if (verify_error) return is_validity_error(verify_error) ? TlsFailure::expired : TlsFailure::untrusted;
  if (ERR_GET_LIB(first) == ERR_LIB_SSL && ERR_GET_REASON(first) == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE)
    return TlsFailure::no_certificate;
  return TlsFailure::protocol;
}

}  // namespace sluice::net
