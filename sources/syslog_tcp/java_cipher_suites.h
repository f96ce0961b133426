#pragma once

// Flume's include-cipher-suites and exclude-cipher-suites name cipher suites as Java and IANA do
// (TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384). OpenSSL names TLS 1.2 ciphers
// its own way (ECDHE-ECDSA-AES128-GCM-SHA256) and keeps TLS 1.3 suites in a list of their own;
// this turns Flume's two lists into OpenSSL's two strings, so a Flume TLS config keeps its meaning.

#include <string>
#include <vector>

namespace sluice::syslog_tcp {

struct OpensslCipherChoice {
  std::string tls12_ciphers;  // for SSL_CTX_set_cipher_list
  std::string tls13_suites;   // for SSL_CTX_set_ciphersuites
  bool tls12_left = true;     // false: included suites leave TLS 1.2 nothing, so it is turned off
  bool tls13_left = true;     // likewise TLS 1.3
  std::string unknown;        // a name OpenSSL does not know (the lists are then unusable)
};

// Java semantics: with an include list, exactly its suites minus the excluded; without one,
// OpenSSL's defaults minus the excluded. Either list may be empty, not both.
OpensslCipherChoice openssl_cipher_choice(const std::vector<std::string>& include,
                                          const std::vector<std::string>& exclude);

}  // namespace sluice::syslog_tcp
