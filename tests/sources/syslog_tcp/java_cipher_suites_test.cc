// Flume's include/exclude-cipher-suites in Java's names, turned into OpenSSL's two lists.

#include <openssl/ssl.h>

#include <catch2/catch.hpp>

#include "sources/syslog_tcp/java_cipher_suites.h"

using namespace sluice::syslog_tcp;

TEST_CASE("Java's TLS 1.2 names become OpenSSL's, TLS 1.3 suites keep theirs", "[source][tls]") {
  const OpensslCipherChoice choice = openssl_cipher_choice(
      {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384"},
      {});
  CHECK(choice.unknown.empty());
  CHECK(choice.tls12_ciphers == "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384");
  CHECK(choice.tls13_suites == "TLS_AES_256_GCM_SHA384");
  CHECK(choice.tls12_left);
  CHECK(choice.tls13_left);
}

TEST_CASE("an include list of one TLS version's suites leaves the other version none", "[source][tls]") {
  const OpensslCipherChoice only12 = openssl_cipher_choice({"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}, {});
  CHECK(only12.tls12_left);
  CHECK_FALSE(only12.tls13_left);
  const OpensslCipherChoice only13 = openssl_cipher_choice({"TLS_CHACHA20_POLY1305_SHA256"}, {});
  CHECK_FALSE(only13.tls12_left);
  CHECK(only13.tls13_suites == "TLS_CHACHA20_POLY1305_SHA256");
}

TEST_CASE("excluded suites come out of the included ones, or out of OpenSSL's defaults", "[source][tls]") {
  const OpensslCipherChoice from_included =
      openssl_cipher_choice({"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
                            {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"});
  CHECK(from_included.tls12_ciphers == "ECDHE-ECDSA-AES256-GCM-SHA384");
  CHECK_FALSE(openssl_cipher_choice({"TLS_AES_128_GCM_SHA256"}, {"TLS_AES_128_GCM_SHA256"}).tls13_left);

  const OpensslCipherChoice from_defaults =
      openssl_cipher_choice({}, {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"});
  CHECK(from_defaults.tls12_ciphers == std::string(OSSL_default_cipher_list()) + ":!ECDHE-ECDSA-AES128-GCM-SHA256");
  CHECK(from_defaults.tls13_suites.find("TLS_AES_256_GCM_SHA384") != std::string::npos);
  CHECK(from_defaults.tls13_suites.find("TLS_AES_128_GCM_SHA256") == std::string::npos);
  CHECK(from_defaults.tls12_left);
  CHECK(from_defaults.tls13_left);
}

TEST_CASE("a name OpenSSL does not know is reported, in either list", "[source][tls]") {
  CHECK(openssl_cipher_choice({"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA257"}, {}).unknown ==
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA257");
  CHECK(openssl_cipher_choice({}, {"TLS_AES_512_GCM"}).unknown == "TLS_AES_512_GCM");
  CHECK(openssl_cipher_choice({}, {"ECDHE-ECDSA-AES128-GCM-SHA256"}).unknown == "ECDHE-ECDSA-AES128-GCM-SHA256");
}
