#pragma once
// Kafka's Java clients take SASL credentials as a JAAS line (`sasl.jaas.config`), which Flume
// users have in their files as kafka.producer.sasl.jaas.config:
//   org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";
// librdkafka takes them as sasl.username and sasl.password. The PLAIN and SCRAM login modules map
// onto those; any other module (Kerberos, OAuth bearer, a custom class) or option has no
// librdkafka equivalent here and is refused, saying what to write instead.

#include <string>
#include <string_view>

namespace sluice::kafka {

struct JaasCredentials {
  std::string username;
  std::string password;
};

// The credentials of a PlainLoginModule or ScramLoginModule line. Throws std::invalid_argument
// with a message for the user (the caller names the file, line and key).
JaasCredentials parse_jaas_config(std::string_view line);

}  // namespace sluice::kafka
