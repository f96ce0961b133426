#pragma once
// The Avro source's own properties (Flume's AvroSource's and ours); the network's (bind, port,
// connections, TLS, idleTimeout, batchSize) are a stream's (sources/net/stream_settings.h,
// tls_settings.h), bind being Flume's name for host.

#include "agent/api/property_table.h"
#include "sources/avro/avro_session.h"
#include "sources/net/stream_settings.h"

namespace sluice::avro {

struct AvroConfig {
  bool acknowledge_on_put = false;  // ackAfter = channel
  config::ByteSize max_frame_size;
  int64_t max_batch_events = 0;
  std::chrono::milliseconds channel_full_timeout{0};
  bool ip_filter = false;
  std::string ip_filter_rules;
  int64_t threads = 0;   // Flume's: parsed and unused by Flume 1.11's AvroSource
  bool deflate = false;  // compression-type
};

extern const config::PropertyTable<AvroConfig> kAvroProperties;

// The stream's table and TLS's as the Avro source has them (no eventSize: a call's size is
// maxFrameSize's).
const config::PropertyTable<net::StreamSettings>& avro_stream_properties();

struct AvroSourceConfig {
  AvroConfig avro;
  net::StreamSettings stream;
  AvroSettings settings() const {
    return {.max_frame_bytes = static_cast<size_t>(avro.max_frame_size.bytes),
            .max_batch_events = static_cast<size_t>(avro.max_batch_events),
            .deflate = avro.deflate,
            .channel_full_timeout = avro.channel_full_timeout};
  }
};

// Both tables from one component; a property of neither is refused.
AvroSourceConfig parse_avro_source_config(const config::ComponentConfig& component);

}  // namespace sluice::avro
