#pragma once
// TLS for a stream source (RFC 5425): the ssl.* properties and Flume's keystore and cipher-suite
// names, their table (which a source's table takes: config::lifted) and what the table cannot
// check of them together. tls_context.h makes the OpenSSL context from them.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/api/property_table.h"

namespace sluice::net {

// ssl.clientAuth: whether a TLS client must show a certificate that verifies (tls_context.h).
enum class ClientAuth { none, optional, required };
// ssl.protocols, as bits.
enum TlsVersion : uint8_t { tls_1_2 = 1, tls_1_3 = 2 };

// PEM files, or Flume's keystore (PKCS12).
struct TlsSettings {
  bool ssl = false;
  std::string ssl_certificate, ssl_key, ssl_key_password, ssl_ca;
  ClientAuth ssl_client_auth = ClientAuth::none;
  std::vector<std::string> ssl_allowed_peers;
  uint8_t ssl_protocols = 0;  // TlsVersion bits
  std::string ssl_ciphers, ssl_cipher_suites;
  std::vector<std::string> include_cipher_suites, exclude_cipher_suites;  // Flume's, in Java's names
  std::string_view cipher_property;  // set: ssl_ciphers and ssl_cipher_suites were made from this Flume property
  std::chrono::milliseconds ssl_handshake_timeout{0};
  size_t ssl_max_handshakes = 0;
  std::string ssl_crl;
  std::chrono::milliseconds ssl_reload_interval{0};  // 0: the files are read again on SIGHUP only
  std::string keystore, keystore_password, keystore_type;
  uint8_t exclude_protocols = 0;  // Flume's exclude-protocols (TlsVersion bits; older ones are never on)
};

// ssl, ssl.*, keystore*, include-/exclude-*.
const config::PropertyTable<TlsSettings>& tls_properties();

// What the table cannot say about them together (a TLS setting without ssl = true, a certificate
// and its key, Flume's cipher suites made OpenSSL's); the files themselves are read (and checked)
// by TlsContext. Throws config::ConfigError naming the property.
void check_tls_settings(const config::ComponentConfig& component, TlsSettings& settings);

}  // namespace sluice::net
