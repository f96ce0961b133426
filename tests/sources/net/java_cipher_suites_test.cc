// Flume's include/exclude-cipher-suites in Java's names, turned into OpenSSL's two lists with
// Flume's meaning: OpenSSL's defaults ∩ include − exclude. Each list is checked by what an
// OpenSSL context configured with it really offers.

#include <openssl/ssl.h>

#include <catch2/catch.hpp>

#include <memory>
#include <set>

#include "sources/net/java_cipher_suites.h"

using namespace sluice::net;

namespace {

// The IANA names of the suites a server context offers with `choice` applied.
std::set<std::string> offered(const OpensslCipherChoice& choice) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_server_method()), &SSL_CTX_free);
  if (choice.tls12_left) REQUIRE(SSL_CTX_set_cipher_list(ctx.get(), choice.tls12_ciphers.c_str()) == 1);
  REQUIRE(SSL_CTX_set_ciphersuites(ctx.get(), choice.tls13_left ? choice.tls13_suites.c_str() : "") == 1);
  std::set<std::string> names;
  STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(ctx.get());
  for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
    const SSL_CIPHER* c = sk_SSL_CIPHER_value(ciphers, i);
    if (!choice.tls12_left && std::string_view(SSL_CIPHER_get_version(c)) != "TLSv1.3") continue;
    names.insert(SSL_CIPHER_standard_name(c));
  }
  return names;
}

}  // namespace

TEST_CASE("an include list offers exactly its suites, TLS 1.2 in OpenSSL's names and TLS 1.3 in IANA's",
          "[source][tls]") {
  const OpensslCipherChoice choice = openssl_cipher_choice(
      {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384"},
      {});
  CHECK(choice.unknown.empty());
  CHECK(choice.ignored.empty());
  CHECK(choice.tls12_ciphers.find("ECDHE-ECDSA-AES128-GCM-SHA256") != std::string::npos);
  CHECK(choice.tls13_suites == "TLS_AES_256_GCM_SHA384");
  CHECK(offered(choice) == std::set<std::string>{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
                                                 "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384"});
}

TEST_CASE("an include list of one TLS version's suites leaves the other none, Java's SCSV changes nothing",
          "[source][tls]") {
  const OpensslCipherChoice only12 =
      openssl_cipher_choice({"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"}, {});
  CHECK(only12.tls12_left);
  CHECK_FALSE(only12.tls13_left);  // the SCSV is no TLS 1.3 suite
  REQUIRE(only12.ignored.size() == 1);
  CHECK_THAT(only12.ignored[0], Catch::StartsWith("TLS_EMPTY_RENEGOTIATION_INFO_SCSV (a signalling value"));
  const OpensslCipherChoice only13 = openssl_cipher_choice({"TLS_CHACHA20_POLY1305_SHA256"}, {});
  CHECK_FALSE(only13.tls12_left);
  CHECK(offered(only13) == std::set<std::string>{"TLS_CHACHA20_POLY1305_SHA256"});
}

TEST_CASE("as in Flume, an include list cannot enable a suite the defaults leave off", "[source][tls]") {
  const OpensslCipherChoice choice = openssl_cipher_choice({"TLS_AES_128_CCM_8_SHA256", "TLS_AES_128_GCM_SHA256"}, {});
  CHECK(offered(choice).count("TLS_AES_128_CCM_8_SHA256") == 0);
  CHECK(offered(choice).count("TLS_AES_128_GCM_SHA256") == 1);
  REQUIRE(choice.ignored.size() == 1);
  CHECK_THAT(choice.ignored[0], Catch::StartsWith("TLS_AES_128_CCM_8_SHA256 (not among OpenSSL's default"));
}

TEST_CASE("excluded suites come out of the included ones, or out of the defaults", "[source][tls]") {
  const OpensslCipherChoice from_included =
      openssl_cipher_choice({"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
                            {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"});
  CHECK(offered(from_included) == std::set<std::string>{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"});
  CHECK_FALSE(openssl_cipher_choice({"TLS_AES_128_GCM_SHA256"}, {"TLS_AES_128_GCM_SHA256"}).tls13_left);

  const OpensslCipherChoice from_defaults =
      openssl_cipher_choice({}, {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"});
  const std::set<std::string> left = offered(from_defaults);
  CHECK(left.count("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256") == 0);
  CHECK(left.count("TLS_AES_128_GCM_SHA256") == 0);
  CHECK(left.count("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384") == 1);
  CHECK(left.count("TLS_AES_256_GCM_SHA384") == 1);
}

TEST_CASE("a misspelt included suite is reported, an excluded one OpenSSL lacks is only noted", "[source][tls]") {
  CHECK(openssl_cipher_choice({"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA257"}, {}).unknown ==
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA257");
  CHECK(openssl_cipher_choice({"ECDHE-ECDSA-AES128-GCM-SHA256"}, {}).unknown == "ECDHE-ECDSA-AES128-GCM-SHA256");
  // Flume hardening lists often exclude suites OpenSSL 3 never had: harmless, so not refused.
  const OpensslCipherChoice hardening =
      openssl_cipher_choice({}, {"TLS_RSA_WITH_RC4_128_SHA", "SSL_RSA_WITH_3DES_EDE_CBC_SHA"});
  CHECK(hardening.unknown.empty());
  CHECK(hardening.ignored.size() == 2);
  CHECK(hardening.tls12_left);
  CHECK(hardening.tls13_left);
}
