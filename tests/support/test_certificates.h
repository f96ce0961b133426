#pragma once
// Certificates for TLS tests, made with OpenSSL's API into a directory as PEM files: a CA, a
// server certificate it signed (CN localhost, SAN 127.0.0.1), client certificates it signed
// (valid, expired, and one the CA revoked, with the CA's CRL), one signed by another CA, and a
// self-signed one.

#include <openssl/x509.h>

#include <string>

namespace sluice::test {

struct CertificateFiles {
  std::string ca;                           // ca.pem: the CA that signs server and clients
  std::string server_cert, server_key;      // server.pem, server.key
  std::string server_key_encrypted;         // server-encrypted.key, password "secret"
  std::string client_cert, client_key;      // client.pem (CN client.example), client.key
  std::string expired_cert, expired_key;    // signed by ca, expired an hour ago
  std::string stranger_cert, stranger_key;  // signed by another CA
  std::string self_signed_cert, self_signed_key;
  std::string revoked_cert, revoked_key;  // signed by ca, then revoked by it
  std::string crl;                        // crl.pem: ca's CRL, revoking revoked_cert (valid for 30 days)
  std::string keystore;                   // server.p12: server cert + key + ca, password "secret"
};

// Writes them into `directory`; each call makes new keys (so that a rewrite changes fingerprints).
CertificateFiles make_certificates(const std::string& directory);

// The SHA-256 fingerprint of a certificate, or of a PEM certificate file, as "SHA256:AB:CD:...".
std::string fingerprint_text(X509* certificate);
std::string fingerprint_of_file(const std::string& pem);

}  // namespace sluice::test
