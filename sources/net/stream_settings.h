#pragma once
// What every stream source is configured with, whatever its connections speak: where it listens,
// how many io threads serve it, who may connect (allow/deny, maxConnections, a PROXY-protocol
// balancer), the headers that say where an event came from, timeouts, and TLS (a base, so that its
// rows bind as they are). Their table is composed into each source's own (config::lifted).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/api/event_batch.h"
#include "agent/api/property_table.h"
#include "sources/net/proxy_header.h"
#include "sources/net/tls_settings.h"
#include "sources/pipeline/client_filter.h"
#include "sources/pipeline/client_rate.h"

namespace sluice::net {

using pipeline::address_text;
using pipeline::ClientFilter;
using pipeline::Network;

struct StreamSettings : TlsSettings {
  std::string host;
  std::vector<uint16_t> ports;
  size_t batch_size = 0;
  size_t event_size = 0;  // the longest message kept whole
  config::ByteSize read_buffer_size;
  int64_t num_processors = 0;
  size_t backlog = 0;
  int64_t max_connections = 0;
  std::vector<Network> allow;
  std::vector<Network> deny;
  ProxyProtocol proxy_protocol = ProxyProtocol::none;
  std::chrono::milliseconds proxy_header_timeout{0};
  std::vector<Network> proxy_trusted_from;
  std::string port_header;
  std::string client_ip_header;
  std::string client_hostname_header;
  std::chrono::milliseconds idle_timeout{0};
  std::chrono::milliseconds max_connection_age{0};         // 0: connections live as long as their senders keep them
  std::chrono::milliseconds max_connection_age_jitter{0};  // each connection's age is max_connection_age + [0, this]
  int64_t max_events_per_client = 0;                       // per client address; 0: no limit
  config::ByteSize max_bytes_per_client;
  std::chrono::milliseconds hostname_cache_ttl{0};
  std::chrono::milliseconds hostname_lookup_timeout{0};

  // Made by check_stream_settings from the above:
  ClientFilter clients;          // allow and deny
  ClientFilter proxy_balancers;  // proxyTrustedFrom: whose PROXY headers are believed
  std::shared_ptr<const HeaderNames> header_names;
  pipeline::ClientRateLimits client_rate;
};

// host, ports, batchSize, eventSize, readBufferSize, numProcessors, maxConnections, allow, deny,
// proxy*, portHeader, clientIPHeader, clientHostnameHeader, hostname*, idleTimeout, maxConnectionAge*, backlog (the
// TLS rows are tls_properties()).
const config::PropertyTable<StreamSettings>& stream_properties();

// What the table cannot say (ports given, proxyProtocol with proxyTrustedFrom, the TLS settings
// together) and what is made of the rows (the client filters, the header names). Throws
// config::ConfigError naming the property.
void check_stream_settings(const config::ComponentConfig& component, StreamSettings& settings);

// io threads for numProcessors = 0: half the CPUs, at least one.
int resolve_num_processors(int64_t configured);

}  // namespace sluice::net
