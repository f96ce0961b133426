#pragma once

// Flume's include-cipher-suites and exclude-cipher-suites name cipher suites as Java and IANA do
// (TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384). Flume filters the JVM's
// enabled suites: enabled = defaults ∩ include (all defaults without one) − exclude, in the
// defaults' order. Here the defaults are OpenSSL's (its build and the system's openssl.cnf),
// and the result is OpenSSL's two strings: TLS 1.2 ciphers in its own names
// (ECDHE-ECDSA-AES128-GCM-SHA256), TLS 1.3 suites in IANA's.

#include <string>
#include <vector>

namespace sluice::net {

struct OpensslCipherChoice {
  std::string tls12_ciphers;         // for SSL_CTX_set_cipher_list
  std::string tls13_suites;          // for SSL_CTX_set_ciphersuites
  bool tls12_left = true;            // false: no TLS 1.2 cipher is left, so TLS 1.2 is to be turned off
  bool tls13_left = true;            // likewise TLS 1.3
  std::string unknown;               // an included name OpenSSL does not know at all (a typo): refuse
  std::vector<std::string> ignored;  // names that change nothing, each with why (to be logged)
};

OpensslCipherChoice openssl_cipher_choice(const std::vector<std::string>& include,
                                          const std::vector<std::string>& exclude);

}  // namespace sluice::net
