#include "tests/support/token_server.h"

#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace sluice::test {
namespace {

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// JWT's base64url: '-' and '_' for '+' and '/', no padding.
std::string base64url(const std::string& bytes) {
  std::string out = base64(bytes);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

std::string sign_rs256(const std::string& key_pem, const std::string& input) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())),
                                                &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr),
                                                          &EVP_PKEY_free);
  if (!key) throw std::runtime_error("token server: cannot read the signing key");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  size_t length = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &length, reinterpret_cast<const unsigned char*>(input.data()), input.size()) !=
          1)
    throw std::runtime_error("token server: cannot sign");
  std::string signature(length, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
    throw std::runtime_error("token server: cannot sign");
  signature.resize(length);
  return signature;
}

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string response(int status, const std::string& reason, const std::string& json) {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + std::to_string(json.size()) +
         "\r\n\r\n" + json;
}

// Appends what `fd` sends to `request` while `more()` holds, up to 64 KiB and `deadline`.
template <class More>
void read_while(int fd, std::string& request, std::chrono::steady_clock::time_point deadline, More&& more) {
  while (more() && request.size() < 65536 && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    request.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

TokenServer::TokenServer(const std::string& key_pem, std::string client_id, std::string client_secret,
                         std::chrono::seconds lifetime)
    : client_id_(std::move(client_id)), client_secret_(std::move(client_secret)), lifetime_(lifetime) {
  std::ifstream in(key_pem);
  std::stringstream text;
  text << in.rdbuf();
  key_pem_ = text.str();
  if (key_pem_.empty()) throw std::runtime_error("token server: no key in " + key_pem);
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener_, 16) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw std::runtime_error("token server: cannot listen on loopback");
  port_ = ntohs(address.sin_port);
  wake_ = ::eventfd(0, EFD_CLOEXEC);
  thread_ = std::thread([this] { serve(); });
}

TokenServer::~TokenServer() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t woken = ::write(wake_, &one, sizeof one);  // else its next poll (1 s) sees the stop
  thread_.join();
  ::close(listener_);
  ::close(wake_);
}

void TokenServer::serve() {
  while (true) {
    pollfd fds[2] = {{listener_, POLLIN, 0}, {wake_, POLLIN, 0}};
    if (::poll(fds, 2, 1000) < 0) continue;
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    answer(fd);
    ::close(fd);
  }
}

// One request per connection: its head (and a body, ignored) within 5 s and 64 KiB.
void TokenServer::answer(int fd) {
  std::string request;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  read_while(fd, request, deadline, [&] { return request.find("\r\n\r\n") == std::string::npos; });
  // The body (grant_type=...), read before the answer: closing with it unread would reset the
  // connection, and the client could lose the answer.
  const size_t head_end = request.find("\r\n\r\n");
  size_t body_length = 0;
  if (const size_t at = request.find("Content-Length:"); at != std::string::npos && at < head_end)
    body_length = std::strtoul(request.c_str() + at + 15, nullptr, 10);
  read_while(fd, request, deadline,
             [&] { return head_end != std::string::npos && request.size() < head_end + 4 + body_length; });
  std::string authorization;
  std::istringstream lines(request);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string name = "authorization: basic ";
    if (line.size() > name.size()) {
      std::string head = line.substr(0, name.size());
      for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (head == name) authorization = line.substr(name.size());
    }
  }
  if (authorization != base64(client_id_ + ":" + client_secret_)) {
    refused_.fetch_add(1);
    write_all(fd, response(401, "Unauthorized",
                           R"({"error":"invalid_client","error_description":"client authentication failed"})"));
    return;
  }
  issued_.fetch_add(1);
  write_all(fd, response(200, "OK",
                         R"({"access_token":")" + token() + R"(","token_type":"Bearer","expires_in":)" +
                             std::to_string(lifetime_.count()) + "}"));
}

std::string TokenServer::token() const {
  const auto now = static_cast<long long>(std::time(nullptr));
  const std::string header = base64url(R"({"alg":"RS256","typ":"JWT","kid":"sluice-test"})");
  const std::string claims =
      base64url(R"({"sub":"sluice","iss":"sluice-test","aud":"kafka","scope":"kafka","iat":)" + std::to_string(now) +
                R"(,"exp":)" + std::to_string(now + lifetime_.count()) + "}");
  const std::string input = header + "." + claims;
  return input + "." + base64url(sign_rs256(key_pem_, input));
}

}  // namespace sluice::test
