#include "tests/support/test_certificates.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace sluice::test {
namespace {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;

Key new_key() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (!key) throw std::runtime_error("cannot make an EC key");
  return Key(key, &EVP_PKEY_free);
}

void add_extension(X509* certificate, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!extension) throw std::runtime_error("cannot make an X.509 extension");
  X509_add_ext(certificate, extension, -1);
  X509_EXTENSION_free(extension);
}

// A certificate for `key`, signed by issuer_key (itself if no issuer), valid from `from_s` to
// `until_s` seconds from now.
Certificate make_certificate(const std::string& common_name, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key, bool ca,
                             long from_s, long until_s, const char* alt_names = nullptr) {
  static long serial = 1;
  Certificate certificate(X509_new(), &X509_free);
  X509_set_version(certificate.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(certificate.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(certificate.get()), from_s);
  X509_gmtime_adj(X509_getm_notAfter(certificate.get()), until_s);
  X509_set_pubkey(certificate.get(), key);
  X509_NAME* name = X509_get_subject_name(certificate.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("Sluice tests"), -1, -1,
                             0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  X509* signer = issuer ? issuer : certificate.get();
  X509_set_issuer_name(certificate.get(), X509_get_subject_name(signer));
  add_extension(certificate.get(), signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (ca) add_extension(certificate.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  if (alt_names) add_extension(certificate.get(), signer, NID_subject_alt_name, alt_names);
  add_extension(certificate.get(), signer, NID_subject_key_identifier, "hash");
  if (X509_sign(certificate.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0)
    throw std::runtime_error("cannot sign a certificate");
  return certificate;
}

FILE* open_for_writing(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  return f;
}

void write_certificate(const std::string& path, X509* certificate) {
  FILE* f = open_for_writing(path);
  PEM_write_X509(f, certificate);
  std::fclose(f);
}

void write_key(const std::string& path, EVP_PKEY* key, const char* password = nullptr) {
  FILE* f = open_for_writing(path);
  if (password)
    PEM_write_PKCS8PrivateKey(f, key, EVP_aes_256_cbc(), nullptr, 0, nullptr, const_cast<char*>(password));
  else
    PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
}

// The CA's CRL (v2, valid from an hour ago for 30 days), revoking `revoked`.
void write_crl(const std::string& path, X509* ca, EVP_PKEY* ca_key, X509* revoked) {
  std::unique_ptr<X509_CRL, decltype(&X509_CRL_free)> crl(X509_CRL_new(), &X509_CRL_free);
  X509_CRL_set_version(crl.get(), 1);
  X509_CRL_set_issuer_name(crl.get(), X509_get_subject_name(ca));
  std::unique_ptr<ASN1_TIME, decltype(&ASN1_TIME_free)> last(X509_gmtime_adj(nullptr, -3600), &ASN1_TIME_free),
      next(X509_gmtime_adj(nullptr, 30L * 86400), &ASN1_TIME_free);
  X509_CRL_set1_lastUpdate(crl.get(), last.get());
  X509_CRL_set1_nextUpdate(crl.get(), next.get());
  X509_REVOKED* entry = X509_REVOKED_new();
  X509_REVOKED_set_serialNumber(entry, X509_get_serialNumber(revoked));
  X509_REVOKED_set_revocationDate(entry, last.get());
  X509_CRL_add0_revoked(crl.get(), entry);
  X509_CRL_sort(crl.get());
  if (X509_CRL_sign(crl.get(), ca_key, EVP_sha256()) == 0) throw std::runtime_error("cannot sign a CRL");
  FILE* f = open_for_writing(path);
  PEM_write_X509_CRL(f, crl.get());
  std::fclose(f);
}

}  // namespace

CertificateFiles make_certificates(const std::string& dir) {
  constexpr long kDay = 86400;
  CertificateFiles files{.ca = dir + "/ca.pem",
                         .server_cert = dir + "/server.pem",
                         .server_key = dir + "/server.key",
                         .server_key_encrypted = dir + "/server-encrypted.key",
                         .client_cert = dir + "/client.pem",
                         .client_key = dir + "/client.key",
                         .expired_cert = dir + "/expired.pem",
                         .expired_key = dir + "/expired.key",
                         .stranger_cert = dir + "/stranger.pem",
                         .stranger_key = dir + "/stranger.key",
                         .self_signed_cert = dir + "/self-signed.pem",
                         .self_signed_key = dir + "/self-signed.key",
                         .revoked_cert = dir + "/revoked.pem",
                         .revoked_key = dir + "/revoked.key",
                         .crl = dir + "/crl.pem",
                         .keystore = dir + "/server.p12"};
  const Key ca_key = new_key(), other_ca_key = new_key();
  const Certificate ca = make_certificate("Sluice test CA", ca_key.get(), nullptr, nullptr, true, -kDay, 30 * kDay);
  const Certificate other_ca =
      make_certificate("Another CA", other_ca_key.get(), nullptr, nullptr, true, -kDay, 30 * kDay);
  write_certificate(files.ca, ca.get());

  const Key server_key = new_key();
  const Certificate server = make_certificate("localhost", server_key.get(), ca.get(), ca_key.get(), false, -kDay,
                                              30 * kDay, "DNS:localhost,IP:127.0.0.1");
  write_certificate(files.server_cert, server.get());
  write_key(files.server_key, server_key.get());
  write_key(files.server_key_encrypted, server_key.get(), "secret");

  struct Client {
    const std::string& cert;
    const std::string& key;
    const char* name;
    X509* issuer;
    EVP_PKEY* issuer_key;
    long from_s, until_s;
  };
  for (const Client& c :
       {Client{files.client_cert, files.client_key, "client.example", ca.get(), ca_key.get(), -kDay, 30 * kDay},
        Client{files.expired_cert, files.expired_key, "expired.example", ca.get(), ca_key.get(), -2 * kDay, -3600},
        Client{files.stranger_cert, files.stranger_key, "stranger.example", other_ca.get(), other_ca_key.get(), -kDay,
               30 * kDay},
        Client{files.self_signed_cert, files.self_signed_key, "self.example", nullptr, nullptr, -kDay, 30 * kDay},
        Client{files.revoked_cert, files.revoked_key, "revoked.example", ca.get(), ca_key.get(), -kDay, 30 * kDay}}) {
    const Key key = new_key();
    const Certificate certificate = make_certificate(c.name, key.get(), c.issuer, c.issuer_key, false, c.from_s,
                                                     c.until_s, ("DNS:" + std::string(c.name)).c_str());
    write_certificate(c.cert, certificate.get());
    write_key(c.key, key.get());
    if (&c.cert == &files.revoked_cert) write_crl(files.crl, ca.get(), ca_key.get(), certificate.get());
  }

  STACK_OF(X509)* chain = sk_X509_new_null();
  sk_X509_push(chain, ca.get());
  PKCS12* p12 = PKCS12_create("secret", "sluice", server_key.get(), server.get(), chain, 0, 0, 0, 0, 0);
  sk_X509_free(chain);  // the certificates stay ours
  if (!p12) throw std::runtime_error("cannot make a PKCS12 keystore");
  FILE* f = open_for_writing(files.keystore);
  i2d_PKCS12_fp(f, p12);
  std::fclose(f);
  PKCS12_free(p12);
  return files;
}

std::string fingerprint_of_file(const std::string& pem) {
  FILE* f = std::fopen(pem.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot read " + pem);
  X509* certificate = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (!certificate) throw std::runtime_error(pem + " holds no certificate");
  std::string text = fingerprint_text(certificate);
  X509_free(certificate);
  return text;
}

std::string fingerprint_text(X509* certificate) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  X509_digest(certificate, EVP_sha256(), digest, &length);
  std::string text = "SHA256";
  char byte[4];
  for (unsigned int i = 0; i < length; ++i) {
    std::snprintf(byte, sizeof byte, ":%02X", digest[i]);
    text += byte;
  }
  return text;
}

}  // namespace sluice::test
