#pragma once
// The PROXY protocol (HAProxy's, versions 1 and 2): the header a load balancer sends first on a
// connection it opened for a client, naming that client. Only the header is parsed here; what
// follows it is the syslog stream (or the TLS handshake) as the client sent it.
//
//   v1: "PROXY TCP4 192.0.2.7 198.51.100.1 51234 514\r\n" (text, at most 107 bytes; also TCP6, UNKNOWN)
//   v2: a 12-byte signature, version/command, family, a 16-bit length, the addresses, then TLVs

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::net {

// proxyProtocol: none, v1, v2, or auto (either version, but one is required).
enum class ProxyProtocol : uint8_t { none, v1, v2, any };

struct ProxyHeader {
  enum class State : uint8_t { incomplete, done, refused };
  State state = State::incomplete;
  size_t length = 0;  // bytes of the header (done): the stream starts after them
  // The client's address (done); nullopt for LOCAL (v2, the balancer's own health check) and
  // UNKNOWN (v1) connections: the socket's peer stands.
  std::optional<sockaddr_storage> client;
  std::string error;  // refused: why, for the log
};

// The largest v2 header accepted (addresses and TLVs); HAProxy's with its TLVs stays far below.
inline constexpr size_t kProxyHeaderMax = 4096;

// Parses the start of a connection's bytes; `incomplete` until the header is whole (call again
// with more). Refused for anything that is not a header of an accepted version.
ProxyHeader parse_proxy_header(std::string_view bytes, ProxyProtocol accepted);

}  // namespace sluice::net
