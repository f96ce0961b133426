#pragma once
// An OAuth 2 token endpoint on loopback for the OAUTHBEARER tests: a client-credentials request
// (HTTP Basic client id and secret, as librdkafka's OIDC sends it) is answered with a JWT signed
// RS256 by the key whose JWKS the Kafka test cluster trusts (tests/kafka/cluster.sh --sasl makes
// both); wrong credentials get 401. One thread; every wait bounded; stopped by its destructor.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace sluice::test {

class TokenServer {
 public:
  // `key_pem`: the RSA private key file; tokens live `lifetime` and carry sub "sluice", iss
  // "sluice-test", aud "kafka" (what the cluster's broker expects).
  TokenServer(const std::string& key_pem, std::string client_id, std::string client_secret,
              std::chrono::seconds lifetime);
  ~TokenServer();
  TokenServer(const TokenServer&) = delete;
  TokenServer& operator=(const TokenServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/token"; }
  uint64_t issued() const { return issued_.load(); }
  uint64_t refused() const { return refused_.load(); }

 private:
  void serve();
  void answer(int fd);
  std::string token() const;

  std::string key_pem_;  // the PEM text
  const std::string client_id_, client_secret_;
  const std::chrono::seconds lifetime_;
  int listener_ = -1;
  int wake_ = -1;  // eventfd: the destructor's stop
  uint16_t port_ = 0;
  std::atomic<uint64_t> issued_{0}, refused_{0};
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace sluice::test
