// Kafka's JAAS line for SASL credentials, as Flume users write it, mapped onto librdkafka's
// username and password; what has no equivalent is refused saying what to write instead.

#include <catch2/catch.hpp>

#include <stdexcept>

#include "sinks/kafka/jaas_config.h"

using namespace sluice::kafka;
using Catch::Contains;

namespace {

std::string refusal(std::string_view line) {
  try {
    parse_jaas_config(line);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("PLAIN and SCRAM login modules give their username and password", "[kafka][config][jaas]") {
  const JaasCredentials plain = parse_jaas_config(
      "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"s3cr=t;\";");
  CHECK(plain.username == "alice");
  CHECK(plain.password == "s3cr=t;");
  const JaasCredentials scram = parse_jaas_config(
      "  org.apache.kafka.common.security.scram.ScramLoginModule required\n   username=bob   password=\"a \\\"quoted\\\" "
      "word\" ;  ");
  CHECK(scram.username == "bob");
  CHECK(scram.password == "a \"quoted\" word");
}

TEST_CASE("other login modules, options and malformed lines are refused saying why", "[kafka][config][jaas]") {
  CHECK_THAT(refusal("com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;"),
             Contains("sasl.kerberos"));
  CHECK_THAT(refusal("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"),
             Contains("no librdkafka equivalent"));
  CHECK_THAT(refusal("org.apache.kafka.common.security.scram.ScramLoginModule required username=\"a\" "
                     "password=\"b\" tokenauth=\"true\";"),
             Contains("an option other than username and password"));
  CHECK_THAT(refusal("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"b\""),
             Contains("end with ';'"));
  CHECK_THAT(refusal("org.apache.kafka.common.security.plain.PlainLoginModule username=\"a\" password=\"b\";"),
             Contains("flag"));
  CHECK_THAT(refusal("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\";"),
             Contains("password"));
  CHECK_THAT(refusal("org.apache.kafka.common.security.plain.PlainLoginModule required password=\"b"),
             Contains("closing"));
}

TEST_CASE("an unquoted password with a space in it is refused without a word of it in the error",
          "[kafka][config][jaas]") {
  for (const std::string& line :
       {std::string("org.apache.kafka.common.security.plain.PlainLoginModule required username=a password=se cret;"),
        std::string("org.apache.kafka.common.security.plain.PlainLoginModule required username=a password=se cr=et;"),
        std::string("org.apache.kafka.common.security.plain.PlainLoginModule secret password=x;")}) {
    const std::string error = refusal(line);
    INFO(error);
    CHECK_FALSE(error.empty());
    CHECK(error.find("cret") == std::string::npos);
    CHECK(error.find("et;") == std::string::npos);
    CHECK(error.find("secret") == std::string::npos);
  }
}
