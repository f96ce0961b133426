#pragma once
// The Avro sink's properties: Flume's AvroSink's names and defaults, and what Sluice adds (a PEM
// CA for TLS).

#include <chrono>
#include <cstdint>
#include <string>

#include "agent/api/property_table.h"

namespace sluice::avro {

struct AvroSinkConfig {
  std::string hostname;
  int64_t port = 0;
  size_t batch_size = 0;
  std::chrono::milliseconds connect_timeout{0}, request_timeout{0};
  int64_t reset_connection_interval_s = 0;  // seconds, as Flume's; 0 = never
  bool deflate = false;                     // compression-type
  int64_t compression_level = 6;
  bool ssl = false;
  bool trust_all_certs = false;
  std::string truststore, truststore_password, truststore_type;
  std::string ssl_ca;          // ours: a PEM file of CAs, instead of a truststore
  int64_t max_io_workers = 0;  // Flume's Netty workers: accepted, not used (one thread per sink)
};

extern const config::PropertyTable<AvroSinkConfig> kAvroSinkProperties;

// The table's values, checked together (hostname and port given, TLS settings only with ssl,
// deflate not with TLS); throws config::ConfigError naming the property.
AvroSinkConfig parse_avro_sink_config(const config::ComponentConfig& component);

}  // namespace sluice::avro
