#include "sources/net/tls_settings.h"

#include <spdlog/spdlog.h>

#include "sources/net/java_cipher_suites.h"

namespace sluice::net {

static std::optional<std::string> any_word(std::string_view word) { return std::string(word); }

const config::PropertyTable<TlsSettings>& tls_properties() {
  using C = TlsSettings;  // in here: the library's other settings file has its own C (a unity build joins them)
  // Made on first use, everything it needs with it: the sources' tables, initialised in other
  // files (in an order of their own), take these rows.
  // TLS versions by their OpenSSL and Java names; SSLv3, TLSv1 and TLSv1.1 are accepted in a list
  // (Flume's exclude-protocols = SSLv3) and mean nothing: they are never enabled.
  const std::vector<std::pair<std::string_view, uint8_t>> tls_versions{
      {"TLSv1.2", tls_1_2}, {"TLSv1.3", tls_1_3}, {"SSLv3", 0}, {"TLSv1", 0}, {"TLSv1.1", 0}};
  // A table, one row per property, laid out for reading rather than by clang-format.
  // clang-format off
  static const config::PropertyTable<C> table{
    {"ssl", &C::ssl, "false",
     "TLS on every port of this source (RFC 5425; octet-counted and LF-framed syslog inside, detected per frame). "
     "Needs ssl.certificate and ssl.key, or keystore. A plain source beside it may listen on other ports."},
    {"ssl.certificate", &C::ssl_certificate, "",
     "PEM file: the server's certificate, then any intermediate certificates.", {}, {}, {"ssl.cert"}},
    {"ssl.key", &C::ssl_key, "", "PEM file: the certificate's private key (encrypted: give ssl.keyPassword)."},
    {"ssl.keyPassword", &C::ssl_key_password, "", "Password of an encrypted ssl.key (a keystore's is keystore-password)."},
    {"ssl.ca", &C::ssl_ca, "",
     "PEM file of the certificate authorities client certificates must chain to (clientAuth optional or required)."},
    {"ssl.clientAuth",
     config::one_of(&C::ssl_client_auth,
                    {{"none", ClientAuth::none}, {"optional", ClientAuth::optional}, {"required", ClientAuth::required}}),
     "none",
     "none: no client certificate asked for; optional: asked for, and one that is sent must verify; required: a "
     "client without a certificate that verifies is refused."},
    {"ssl.allowedPeers", &C::ssl_allowed_peers, "",
     "If set, only these clients: SHA-256 certificate fingerprints (SHA256:AB:CD:..., or 64 hex digits; a "
     "fingerprint listed here is let in without ssl.ca, as RFC 5425 §5.2 allows for self-signed certificates) and "
     "names matched against the certificate's subject CN and DNS names. Needs clientAuth optional or required."},
    {"ssl.protocols", config::flags_of(&C::ssl_protocols, tls_versions, "TLSv1.2 TLSv1.3"), "TLSv1.2 TLSv1.3",
     "TLS versions offered.", {}, {}, {"include-protocols"}},
    {"exclude-protocols", config::flags_of(&C::exclude_protocols, tls_versions, "TLSv1.2 TLSv1.3 SSLv3 TLSv1 TLSv1.1"),
     "", "Flume's: versions taken out of ssl.protocols (SSLv3, TLSv1 and TLSv1.1 are never on)."},
    {"ssl.ciphers", &C::ssl_ciphers, "",
     "TLS 1.2 cipher list in OpenSSL's syntax (e.g. ECDHE+AESGCM); empty: OpenSSL's default."},
    {"ssl.cipherSuites", &C::ssl_cipher_suites, "",
     "TLS 1.3 cipher suites, colon-separated (e.g. TLS_AES_256_GCM_SHA384); empty: OpenSSL's default."},
    {"include-cipher-suites", config::list_of(&C::include_cipher_suites, "a cipher suite's name", any_word), "",
     "Flume's: the only cipher suites offered, by their Java (IANA) names, e.g. "
     "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 TLS_AES_256_GCM_SHA384; instead of ssl.ciphers and ssl.cipherSuites. "
     "A TLS version left without a suite is turned off."},
    {"exclude-cipher-suites", config::list_of(&C::exclude_cipher_suites, "a cipher suite's name", any_word), "",
     "Flume's: cipher suites (Java names) taken out of include-cipher-suites, or out of OpenSSL's defaults."},
    {"ssl.handshakeTimeout", &C::ssl_handshake_timeout, "10s",
     "A connection that has not completed its TLS handshake this long after it was accepted is closed and counted "
     "(reason timeout).",
     {.min = 100, .max = 3'600'000}},
    {"ssl.maxHandshakes", &C::ssl_max_handshakes, "256",
     "TLS handshakes in progress at once (the source's, shared equally by its io threads, each share rounded up): each "
     "holds OpenSSL's state and "
     "buffers (tens of KiB). Further connections wait, unread, for a slot, at most ssl.handshakeTimeout from their "
     "accept (then refused, reason timeout); a handshake's own ssl.handshakeTimeout starts with its slot. Bounds what "
     "clients that open handshakes and never finish them can hold.",
     {.min = 1, .max = 1'000'000}},
    {"ssl.crl", &C::ssl_crl, "",
     "PEM file of certificate revocation lists: a client certificate revoked by its issuer's CRL is refused "
     "(reason revoked). The file must hold a current CRL of every CA that issues client certificates (one past its "
     "nextUpdate refuses every client of that CA); read again on SIGHUP. Empty: revocation is not checked. Needs "
     "ssl.clientAuth optional or required."},
    {"ssl.reloadInterval", &C::ssl_reload_interval, "1m",
     "How often the TLS files (ssl.certificate, ssl.key, ssl.ca, ssl.crl, keystore) are looked at: one that changed "
     "(its inode, size or time: a rewrite, a rename, a Kubernetes secret's symlink swap) makes the source read them "
     "all again, as SIGHUP does. Handshakes after that use the new certificate, CA and CRL; connections already "
     "open go on. Files that do not load (a certificate without its key, half written) are refused with the "
     "reason and the running ones stay (sluice_source_tls_reloads_total{result}). 0 = on SIGHUP only.",
     {.min = 0, .max = 86'400'000}},
    {"keystore", &C::keystore, "",
     "Flume's: a PKCS12 file with the certificate, its chain and key, instead of ssl.certificate and ssl.key."},
    {"keystore-password", &C::keystore_password, "", "Flume's: the keystore's password."},
    {"keystore-type", &C::keystore_type, "PKCS12",
     "Flume's: the keystore's format; PKCS12 only (convert a JKS one: keytool -importkeystore -deststoretype "
     "PKCS12).",
     {}, {"PKCS12", "pkcs12"}},
  };
  // clang-format on
  return table;
}

// Flume's include/exclude-cipher-suites become ssl.ciphers and ssl.cipherSuites in OpenSSL's names.
static void check_flume_cipher_suites(const config::ComponentConfig& component, TlsSettings& c) {
  if (c.include_cipher_suites.empty() && c.exclude_cipher_suites.empty()) return;
  const char* flume = c.include_cipher_suites.empty() ? "exclude-cipher-suites" : "include-cipher-suites";
  if (!c.ssl_ciphers.empty() || !c.ssl_cipher_suites.empty())
    component.fail(flume, std::string("and ") + (c.ssl_ciphers.empty() ? "ssl.cipherSuites" : "ssl.ciphers") +
                              " are both set: give one of them");
  const OpensslCipherChoice choice = openssl_cipher_choice(c.include_cipher_suites, c.exclude_cipher_suites);
  if (!choice.unknown.empty())
    component.fail(flume, "names " + choice.unknown +
                              ", a cipher suite OpenSSL does not know (Java's name, e.g. "
                              "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)");
  for (const std::string& why : choice.ignored)
    spdlog::warn("{}: {}: ignored {}", component.where(flume).to_string(), component.full_key(flume), why);
  if (!choice.tls12_left) c.ssl_protocols = static_cast<uint8_t>(c.ssl_protocols & ~tls_1_2);
  if (!choice.tls13_left) c.ssl_protocols = static_cast<uint8_t>(c.ssl_protocols & ~tls_1_3);
  if (c.ssl_protocols == 0) component.fail(flume, "leaves no cipher suite for the TLS versions in ssl.protocols");
  c.ssl_ciphers = choice.tls12_left ? choice.tls12_ciphers : "";
  c.ssl_cipher_suites = choice.tls13_left ? choice.tls13_suites : "";
  c.cipher_property = flume;
}

// What the table cannot say about the ssl.* properties together; the files themselves are read
// (and checked) by TlsContext.
void check_tls_settings(const config::ComponentConfig& component, TlsSettings& c) {
  c.ssl_protocols = static_cast<uint8_t>(c.ssl_protocols & ~c.exclude_protocols);
  if (!c.ssl) {
    // A TLS setting on a plain source is a mistake that would look like security: refused.
    for (const config::Property<TlsSettings>& row : tls_properties()) {
      if (!row.name.starts_with("ssl.") && !row.name.starts_with("keystore") && !row.name.starts_with("exclude-") &&
          !row.name.starts_with("include-"))
        continue;
      std::vector<std::string_view> names = row.aliases;
      names.push_back(row.name);
      for (std::string_view name : names)
        if (component.properties.count(std::string(name)))
          component.fail(name, "is set but ssl is false: set ssl = true, or remove it");
    }
    return;
  }
  if (c.ssl_protocols == 0) component.fail("ssl.protocols", "leaves no TLS version (TLSv1.2, TLSv1.3)");
  check_flume_cipher_suites(component, c);
  const bool pem = !c.ssl_certificate.empty() || !c.ssl_key.empty();
  if (pem && !c.keystore.empty())
    component.fail("keystore", "and ssl.certificate/ssl.key are both set: give one of them");
  if (!pem && c.keystore.empty())
    component.fail("ssl", "is true but there is no certificate: set ssl.certificate and ssl.key (PEM), or keystore");
  if (pem && (c.ssl_certificate.empty() || c.ssl_key.empty()))
    component.fail(c.ssl_certificate.empty() ? "ssl.certificate" : "ssl.key",
                   "is missing: ssl.certificate and ssl.key go together");
  if (!c.ssl_ca.empty() && c.ssl_client_auth == ClientAuth::none)
    component.fail("ssl.ca",
                   "is set but ssl.clientAuth is none, so no client would be verified: set ssl.clientAuth = "
                   "optional or required");
  if (!c.ssl_crl.empty() && c.ssl_client_auth == ClientAuth::none)
    component.fail("ssl.crl",
                   "is set but ssl.clientAuth is none, so no client certificate would be checked: set "
                   "ssl.clientAuth = optional or required");
  if (!c.ssl_allowed_peers.empty() && c.ssl_client_auth == ClientAuth::none)
    component.fail("ssl.allowedPeers",
                   "needs ssl.clientAuth = optional or required: with none no client shows a certificate");
}

}  // namespace sluice::net
