// Kafka's JAAS line for SASL credentials, as Flume users write it, mapped onto librdkafka's
// username and password; what has no equivalent is refused saying what to write instead.

#include <catch2/catch.hpp>

#include <stdexcept>

#include "sinks/kafka/jaas_config.h"

using namespace sluice::kafka;
using Catch::Contains;

namespace {

std::string jaas_refusal(std::string_view line) {
  try {
    parse_jaas_config(line);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("PLAIN and SCRAM login modules give their username and password", "[kafka][config][jaas]") {
  CHECK(
      parse_jaas_config(
          "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"s3cr=t;\";") ==
      JaasSettings{{"sasl.username", "alice"}, {"sasl.password", "s3cr=t;"}});
  CHECK(parse_jaas_config("  org.apache.kafka.common.security.scram.ScramLoginModule required\n   username=bob   "
                          "password=\"a \\\"quoted\\\" word\" ;  ") ==
        JaasSettings{{"sasl.username", "bob"}, {"sasl.password", "a \"quoted\" word"}});
}

TEST_CASE("OAuthBearerLoginModule's client credentials give librdkafka's OIDC settings", "[kafka][config][jaas]") {
  CHECK(parse_jaas_config(
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            "clientId=\"sluice\" clientSecret=\"s3cret\" scope=\"kafka\" extension_logicalCluster=\"lkc-1\" "
            "extension_identityPoolId=\"pool-2\";") ==
        JaasSettings{{"sasl.oauthbearer.method", "oidc"},
                     {"sasl.oauthbearer.client.id", "sluice"},
                     {"sasl.oauthbearer.client.secret", "s3cret"},
                     {"sasl.oauthbearer.scope", "kafka"},
                     {"sasl.oauthbearer.extensions", "identityPoolId=pool-2,logicalCluster=lkc-1"}});
  CHECK(is_oidc_login_handler("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"));
  CHECK(is_oidc_login_handler("org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"));
  CHECK_FALSE(is_oidc_login_handler("com.example.MyHandler"));
}

TEST_CASE("other login modules, options and malformed lines are refused saying why", "[kafka][config][jaas]") {
  CHECK_THAT(jaas_refusal("com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;"),
             Contains("sasl.kerberos"));
  CHECK_THAT(jaas_refusal("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"),
             Contains("needs clientId"));
  CHECK_THAT(jaas_refusal("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                          "unsecuredLoginStringClaim_sub=\"alice\";"),
             Contains("unsecure.jwt"));
  CHECK_THAT(jaas_refusal("org.apache.kafka.common.security.scram.ScramLoginModule required username=\"a\" "
                          "password=\"b\" tokenauth=\"true\";"),
             Contains("an option other than username and password"));
  CHECK_THAT(
      jaas_refusal("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"b\""),
      Contains("end with ';'"));
  CHECK_THAT(jaas_refusal("org.apache.kafka.common.security.plain.PlainLoginModule username=\"a\" password=\"b\";"),
             Contains("flag"));
  CHECK_THAT(jaas_refusal("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\";"),
             Contains("password"));
  CHECK_THAT(jaas_refusal("org.apache.kafka.common.security.plain.PlainLoginModule required password=\"b"),
             Contains("closing"));
}

TEST_CASE("an unquoted password with a space in it is refused without a word of it in the error",
          "[kafka][config][jaas]") {
  for (const std::string& line :
       {std::string("org.apache.kafka.common.security.plain.PlainLoginModule required username=a password=se cret;"),
        std::string("org.apache.kafka.common.security.plain.PlainLoginModule required username=a password=se cr=et;"),
        std::string("org.apache.kafka.common.security.plain.PlainLoginModule secret password=x;")}) {
    const std::string error = jaas_refusal(line);
    INFO(error);
    CHECK_FALSE(error.empty());
    CHECK(error.find("cret") == std::string::npos);
    CHECK(error.find("et;") == std::string::npos);
    CHECK(error.find("secret") == std::string::npos);
  }
}
