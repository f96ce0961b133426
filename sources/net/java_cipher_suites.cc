#include "sources/net/java_cipher_suites.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <memory>
#include <string_view>

namespace sluice::net {

namespace {

struct Suite {
  std::string standard;  // IANA's (and Java's) name
  std::string openssl;   // OpenSSL's
  bool tls13;
};

// The suites a fresh server context offers: OpenSSL's defaults on this machine, in its order.
std::vector<Suite> default_suites() {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_server_method()), &SSL_CTX_free);
  std::vector<Suite> suites;
  if (!ctx) return suites;
  STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(ctx.get());
  for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
    const SSL_CIPHER* c = sk_SSL_CIPHER_value(ciphers, i);
    const char* standard = SSL_CIPHER_standard_name(c);
    if (!standard) continue;
    suites.push_back({standard, SSL_CIPHER_get_name(c), std::string_view(SSL_CIPHER_get_version(c)) == "TLSv1.3"});
  }
  return suites;
}

// Signalling values Java lists among its suites; OpenSSL sends them by itself when needed.
bool is_signalling_value(std::string_view name) { return name.ends_with("_SCSV"); }

bool known_to_openssl(const std::string& name) {
  return std::string_view(OPENSSL_cipher_name(name.c_str())) != "(NONE)";
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

OpensslCipherChoice openssl_cipher_choice(const std::vector<std::string>& include,
                                          const std::vector<std::string>& exclude) {
  OpensslCipherChoice choice;
  const std::vector<Suite> defaults = default_suites();
  const auto is_default = [&](const std::string& name) {
    return std::any_of(defaults.begin(), defaults.end(), [&](const Suite& s) { return s.standard == name; });
  };
  for (const std::string& name : include) {
    if (is_signalling_value(name))
      choice.ignored.push_back(name + " (a signalling value, not a cipher suite: OpenSSL sends it when needed)");
    else if (!known_to_openssl(name))
      return choice.unknown = name, choice;
    else if (!is_default(name))
      choice.ignored.push_back(name + " (not among OpenSSL's default suites here; as in Flume, not enabled)");
  }
  for (const std::string& name : exclude)
    if (!is_signalling_value(name) && !is_default(name))
      choice.ignored.push_back(name + " (excluded, but not offered anyway)");

  std::vector<std::string> tls12, tls13;
  for (const Suite& s : defaults) {
    if ((!include.empty() && !contains(include, s.standard)) || contains(exclude, s.standard)) continue;
    (s.tls13 ? tls13 : tls12).push_back(s.tls13 ? s.standard : s.openssl);
  }
  const auto join = [](const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& name : names) out += (out.empty() ? "" : ":") + name;
    return out;
  };
  choice.tls12_ciphers = join(tls12);
  choice.tls13_suites = join(tls13);
  choice.tls12_left = !tls12.empty();
  choice.tls13_left = !tls13.empty();
  return choice;
}

}  // namespace sluice::net
