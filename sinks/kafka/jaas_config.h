#pragma once
// Kafka's Java clients take SASL credentials as a JAAS line (`sasl.jaas.config`), which Flume
// users have in their files as kafka.producer.sasl.jaas.config:
//   org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";
// librdkafka takes them as sasl.username and sasl.password. The PLAIN and SCRAM login modules map
// onto those. OAuthBearerLoginModule with OIDC client credentials (Kafka 3.1+, KIP-768:
//   ...OAuthBearerLoginModule required clientId="c" clientSecret="s" scope="kafka" extension_x="y";
// beside sasl.oauthbearer.token.endpoint.url) maps onto librdkafka's sasl.oauthbearer.method = oidc,
// client.id, client.secret, scope and extensions. Any other module (Kerberos, a custom class) or
// option has no librdkafka equivalent here and is refused, saying what to write instead.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::kafka {

// librdkafka's settings for the line, in order (name, value).
using JaasSettings = std::vector<std::pair<std::string, std::string>>;

// The settings of a PlainLoginModule, ScramLoginModule or OAuthBearerLoginModule line. Throws
// std::invalid_argument with a message for the user (the caller names the file, line and key).
JaasSettings parse_jaas_config(std::string_view line);

// Kafka's sasl.login.callback.handler.class: the OIDC client-credentials handler is what librdkafka
// does itself with sasl.oauthbearer.method = oidc (true: nothing to set); another class has no
// equivalent (false).
bool is_oidc_login_handler(std::string_view java_class);

}  // namespace sluice::kafka
