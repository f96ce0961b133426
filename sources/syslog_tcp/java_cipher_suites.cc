#include "sources/syslog_tcp/java_cipher_suites.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <string_view>

namespace sluice::syslog_tcp {

namespace {

// A TLS 1.3 suite names no key exchange ("_WITH_"): its IANA name is OpenSSL's too.
bool is_tls13_suite(std::string_view name) { return name.find("_WITH_") == std::string_view::npos; }

std::vector<std::string> split_colons(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const size_t colon = list.find(':');
    if (colon != 0) out.emplace_back(list.substr(0, colon));
    if (colon == std::string_view::npos) break;
    list.remove_prefix(colon + 1);
  }
  return out;
}

std::string join_colons(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ":") + name;
  return out;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

OpensslCipherChoice openssl_cipher_choice(const std::vector<std::string>& include,
                                          const std::vector<std::string>& exclude) {
  OpensslCipherChoice choice;
  // Each Java name in OpenSSL's terms, sorted into the TLS version it belongs to.
  std::vector<std::string> include12, include13, exclude12, exclude13;
  const auto sort_into = [&](const std::vector<std::string>& names, std::vector<std::string>& tls12,
                             std::vector<std::string>& tls13) {
    for (const std::string& name : names) {
      if (is_tls13_suite(name)) {
        // OPENSSL_cipher_name knows TLS 1.3 suites too; asking it rejects a misspelt one.
        if (std::string_view(OPENSSL_cipher_name(name.c_str())) != name) return choice.unknown = name, false;
        tls13.push_back(name);
      } else {
        const std::string_view openssl = OPENSSL_cipher_name(name.c_str());
        if (openssl == "(NONE)") return choice.unknown = name, false;
        tls12.emplace_back(openssl);
      }
    }
    return true;
  };
  if (!sort_into(include, include12, include13) || !sort_into(exclude, exclude12, exclude13)) return choice;

  std::vector<std::string> suites13 = include.empty() ? split_colons(OSSL_default_ciphersuites()) : include13;
  std::erase_if(suites13, [&](const std::string& s) { return contains(exclude13, s); });
  choice.tls13_suites = join_colons(suites13);
  choice.tls13_left = !suites13.empty();

  if (include.empty()) {
    // OpenSSL's cipher-list syntax takes a cipher out by "!NAME", which also stops a later
    // rule from adding it back.
    choice.tls12_ciphers = OSSL_default_cipher_list();
    for (const std::string& name : exclude12) choice.tls12_ciphers += ":!" + name;
  } else {
    std::erase_if(include12, [&](const std::string& s) { return contains(exclude12, s); });
    choice.tls12_ciphers = join_colons(include12);
    choice.tls12_left = !include12.empty();
  }
  return choice;
}

}  // namespace sluice::syslog_tcp
