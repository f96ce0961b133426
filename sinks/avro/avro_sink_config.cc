#include "sinks/avro/avro_sink_config.h"

namespace sluice::avro {

using C = AvroSinkConfig;

// clang-format off
const config::PropertyTable<C> kAvroSinkProperties{
    {"hostname", &C::hostname, "",
     "The Avro source to send to (Flume's or Sluice's): a name or an address; required. The name is resolved at "
     "each connect."},
    {"port", &C::port, "0", "Its port; required.", {.min = 0, .max = 65535}},
    {"batch-size", &C::batch_size, "100",
     "Events per appendBatch call (and per take from the channel); at most the channel's transactionCapacity.",
     {.min = 1, .max = 1'000'000}},
    {"connect-timeout", &C::connect_timeout, "20000",
     "How long a connect (and its TLS handshake) may take, in ms; then the take goes back into the channel and "
     "the sink tries again later.",
     {.min = 1, .max = 3'600'000}},
    {"request-timeout", &C::request_timeout, "20000",
     "How long a call waits for its answer, in ms; then the take goes back into the channel (the collector may "
     "have stored it: counted as possibly duplicated) and the connection is closed. (Flume 1.11 replaces a value "
     "under 1000 with 20000; Sluice uses what is written.)",
     {.min = 1, .max = 3'600'000}},
    {"reset-connection-interval", &C::reset_connection_interval_s, "0",
     "Seconds after which the connection is closed and made again before the next call (so that a balancer in "
     "front of several collectors spreads the load); 0 = never.",
     {.min = 0, .max = 365LL * 86400}},
    {"compression-type", config::one_of(&C::deflate, {{"none", false}, {"NONE", false}, {"deflate", true}}), "none",
     "deflate: every call compressed with zlib, as Flume's (the source must have compression-type = deflate too)."},
    {"compression-level", &C::compression_level, "6", "zlib's level for deflate: 0 (none) to 9 (smallest).",
     {.min = 0, .max = 9}},
    {"ssl", &C::ssl, "false", "Connect with TLS (1.2 or 1.3)."},
    {"trust-all-certs", &C::trust_all_certs, "false",
     "With ssl: accept any server certificate (as Flume's, for tests: the connection is encrypted, not "
     "authenticated)."},
    {"truststore", &C::truststore, "",
     "With ssl: the CAs that sign the collector's certificate, in a PKCS12 file (Flume's truststore; convert a "
     "JKS one: keytool -importkeystore -deststoretype PKCS12). Neither this nor ssl.ca: the system's CAs. As "
     "Flume's, the certificate's chain is verified, not its host name."},
    {"truststore-password", &C::truststore_password, "", "The truststore's password (none if empty)."},
    {"truststore-type", &C::truststore_type, "PKCS12",
     "The truststore's format; PKCS12 only (Flume's default, JKS, is not read: convert it as above).",
     {}, {"PKCS12", "pkcs12"}},
    {"ssl.ca", &C::ssl_ca, "", "With ssl: the CAs in a PEM file, instead of a truststore."},
    {"maxIoWorkers", &C::max_io_workers, "0",
     "Flume's Netty worker threads: accepted and not used (each Avro sink is one thread with one connection).",
     {.min = 0, .max = 1'000'000}},
};
// clang-format on

AvroSinkConfig parse_avro_sink_config(const config::ComponentConfig& component) {
  AvroSinkConfig c = config::bind(kAvroSinkProperties, component);
  if (c.hostname.empty()) component.fail("hostname", "is missing: the host of the Avro source to send to");
  if (c.port == 0) component.fail("port", "is missing: the port of the Avro source to send to");
  if (!c.ssl) {
    for (const auto& [set, property] :
         {std::pair{c.trust_all_certs, "trust-all-certs"}, std::pair{!c.truststore.empty(), "truststore"},
          std::pair{!c.ssl_ca.empty(), "ssl.ca"}})
      if (set) component.fail(property, "is set but ssl is not true: set ssl = true, or remove it");
  }
  if (!c.truststore.empty() && !c.ssl_ca.empty())
    component.fail("ssl.ca", "and truststore are both set: name the CAs in one of them");
  if (c.ssl && c.deflate)
    component.fail("compression-type",
                   "deflate with ssl is not supported (Flume 1.11 compresses outside its TLS, an order Sluice does "
                   "not speak): choose one");
  return c;
}

}  // namespace sluice::avro
