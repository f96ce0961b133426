#include "sinks/kafka/jaas_config.h"

#include <cctype>
#include <map>
#include <stdexcept>

namespace sluice::kafka {
namespace {

constexpr std::string_view kPlainModule = "org.apache.kafka.common.security.plain.PlainLoginModule";
constexpr std::string_view kScramModule = "org.apache.kafka.common.security.scram.ScramLoginModule";
constexpr std::string_view kOAuthBearerModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";

void skip_spaces(std::string_view text, size_t& at) {
  while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
}

// A bare word: up to a space, '=' or ';'.
std::string word(std::string_view text, size_t& at) {
  const size_t start = at;
  while (at < text.size() && !std::isspace(static_cast<unsigned char>(text[at])) && text[at] != '=' && text[at] != ';')
    ++at;
  return std::string(text.substr(start, at - start));
}

// "value" with \" and \\ escapes, as JAAS writes it, or a bare word.
std::string option_value(std::string_view text, size_t& at) {
  if (at >= text.size() || text[at] != '"') return word(text, at);
  std::string value;
  for (++at; at < text.size(); ++at) {
    if (text[at] == '\\' && at + 1 < text.size()) {
      value += text[++at];
    } else if (text[at] == '"') {
      ++at;
      return value;
    } else {
      value += text[at];
    }
  }
  throw std::invalid_argument("a quoted value has no closing '\"'");
}

// OAuthBearerLoginModule's options (KIP-768's client credentials) as librdkafka's OIDC settings.
JaasSettings oidc_settings(const std::map<std::string, std::string>& options) {
  JaasSettings settings{{"sasl.oauthbearer.method", "oidc"}};
  std::string extensions;
  for (const auto& [name, value] : options) {
    if (name == "clientId")
      settings.emplace_back("sasl.oauthbearer.client.id", value);
    else if (name == "clientSecret")
      settings.emplace_back("sasl.oauthbearer.client.secret", value);
    else if (name == "scope")
      settings.emplace_back("sasl.oauthbearer.scope", value);
    else if (name.starts_with("extension_") && name.size() > 10)
      extensions += (extensions.empty() ? "" : ",") + name.substr(10) + "=" + value;
    else
      throw std::invalid_argument(
          "OAuthBearerLoginModule: an option other than clientId, clientSecret, scope and extension_<name> has no "
          "librdkafka equivalent here (unsecured JWTs are for tests: set kafka.producer."
          "enable.sasl.oauthbearer.unsecure.jwt and its sasl.oauthbearer.config instead)");
  }
  if (!options.count("clientId") || !options.count("clientSecret"))
    throw std::invalid_argument(
        "OAuthBearerLoginModule needs clientId=\"...\" and clientSecret=\"...\" (OIDC client credentials; the token "
        "endpoint is kafka.producer.sasl.oauthbearer.token.endpoint.url)");
  if (!extensions.empty()) settings.emplace_back("sasl.oauthbearer.extensions", extensions);
  return settings;
}

}  // namespace

bool is_oidc_login_handler(std::string_view java_class) {
  return java_class == "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler" ||
         java_class == "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler";
}

JaasSettings parse_jaas_config(std::string_view line) {
  size_t at = 0;
  skip_spaces(line, at);
  const std::string module = word(line, at);
  if (module != kPlainModule && module != kScramModule && module != kOAuthBearerModule)
    throw std::invalid_argument(
        "login module " + (module.empty() ? std::string("(none)") : module) +
        " has no librdkafka equivalent here: for SASL/PLAIN or SCRAM use " + std::string(kPlainModule) + " or " +
        std::string(kScramModule) +
        " (or set kafka.producer.sasl.username and kafka.producer.sasl.password); for OAUTHBEARER " +
        std::string(kOAuthBearerModule) +
        " with clientId and clientSecret; for Kerberos set kafka.producer.sasl.kerberos.* (librdkafka's names)");
  skip_spaces(line, at);
  const std::string flag = word(line, at);
  // Nothing of what follows the module's name is echoed in an error: it may be a password.
  if (flag != "required" && flag != "requisite" && flag != "sufficient" && flag != "optional")
    throw std::invalid_argument("after the login module comes its flag (required, requisite, sufficient or optional)");
  std::map<std::string, std::string> options;
  while (true) {
    skip_spaces(line, at);
    if (at >= line.size()) throw std::invalid_argument("the line must end with ';'");
    if (line[at] == ';') {
      ++at;
      skip_spaces(line, at);
      if (at != line.size()) throw std::invalid_argument("one login module only: nothing may follow its ';'");
      break;
    }
    const std::string name = word(line, at);
    skip_spaces(line, at);
    if (name.empty() || at >= line.size() || line[at] != '=')
      throw std::invalid_argument(
          "expected name=\"value\" options after the flag, ended by ';' (a value with a space or ';' in it must be "
          "quoted)");
    ++at;
    skip_spaces(line, at);
    options[name] = option_value(line, at);
  }
  if (module == kOAuthBearerModule) return oidc_settings(options);
  JaasSettings settings;
  for (const auto& [name, value] : options) {
    if (name != "username" && name != "password")
      throw std::invalid_argument(
          "an option other than username and password has no librdkafka equivalent here (not named: an unquoted "
          "password with a space in it looks like one): remove it, or set the librdkafka property it stands for as "
          "kafka.producer.<name>");
  }
  if (!options.count("username") || options.at("username").empty() || !options.count("password"))
    throw std::invalid_argument("needs username=\"...\" and password=\"...\"");
  settings.emplace_back("sasl.username", options.at("username"));
  settings.emplace_back("sasl.password", options.at("password"));
  return settings;
}

}  // namespace sluice::kafka
