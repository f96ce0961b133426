#include "sources/syslog_tcp/syslog_tcp_config.h"

#include "sources/syslog/syslog_properties.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

#include "sources/net/java_cipher_suites.h"

namespace sluice::syslog_tcp {

using C = SyslogTcpConfig;

// TLS versions by their OpenSSL and Java names; SSLv3, TLSv1 and TLSv1.1 are accepted in a list
// (Flume's exclude-protocols = SSLv3) and mean nothing: they are never enabled.
const std::vector<std::pair<std::string_view, uint8_t>> kTlsVersions{
    {"TLSv1.2", tls_1_2}, {"TLSv1.3", tls_1_3}, {"SSLv3", 0}, {"TLSv1", 0}, {"TLSv1.1", 0}};

static std::optional<std::string> any_word(std::string_view word) { return std::string(word); }

// A table, one row per property, laid out for reading rather than by clang-format.
// clang-format off
const config::PropertyTable<C> kSyslogTcpProperties{
    {"host", &C::host, "0.0.0.0", "Address to listen on (an IPv4 or IPv6 literal, or a name resolved at start)."},
    {"ports", config::list_of(&C::ports, "an integer in [0, 65535]", parse_port), "",
     "Space-separated TCP ports to listen on, all feeding this source; 0 picks a free port (tests).",
     {}, {}, {"port"}},
    {"batchSize", &C::batch_size, "100",
     "Max events per put into the channel; a partial batch is put at the end of every io loop round.",
     {.min = 1, .max = 1'000'000}},
    {"eventSize", &C::event_size, "2500",
     "Max bytes of one frame; longer frames are cut to this size, marked Incomplete and counted.",
     {.min = 16, .max = 16 * 1024 * 1024}},
    {"readBufferSize", &C::read_buffer_size, "0",
     "Kernel receive buffer (SO_RCVBUF) per connection; 0 keeps the kernel's default and autotuning.",
     {.min = 0, .max = 1LL << 30}, {}, {"readBufferBytes"}},
    {"numProcessors", &C::num_processors, "0",
     "io threads, each an event loop serving a share of the connections; 0 = half the CPUs (at least 1).",
     {.min = 0, .max = 256}},
    {"maxConnections", &C::max_connections, "100000",
     "Open connections at most; more are closed at once, counted (connections_refused) and logged.",
     {.min = 1, .max = 100'000'000}},
    {"allow", config::list_of(&C::allow, kNetwork, parse_cidr), "",
     "Client networks that may connect (CIDR, e.g. 10.0.0.0/8 ::1); empty: any. Others are refused and counted."},
    {"deny", config::list_of(&C::deny, kNetwork, parse_cidr), "",
     "Client networks refused even if allowed (CIDR)."},
    {"proxyProtocol",
     config::one_of(&C::proxy_protocol, {{"none", ProxyProtocol::none}, {"v1", ProxyProtocol::v1},
                                 {"v2", ProxyProtocol::v2}, {"auto", ProxyProtocol::any}}),
     "none",
     "Behind a load balancer that speaks HAProxy's PROXY protocol (HAProxy send-proxy / send-proxy-v2): v1, v2, or "
     "auto (either, but one is required). Each connection must start with the header, before TLS; its client "
     "address is what clientIPHeader, clientHostnameHeader, allow/deny and the logs use (LOCAL and UNKNOWN "
     "headers keep the balancer's). A connection without a valid header within proxyHeaderTimeout is refused and "
     "counted (reason proxy_header); one closed before sending anything (a balancer's TCP health check) is not. "
     "Needs proxyTrustedFrom: whoever may send the header can claim any client address."},
    {"proxyTrustedFrom", config::list_of(&C::proxy_trusted_from, kNetwork, parse_cidr), "",
     "With proxyProtocol (required there): the networks of the balancers whose PROXY headers are believed (CIDR, "
     "e.g. 10.0.0.5 10.0.1.0/24; as nginx's set_real_ip_from). A connection from any other address is refused "
     "at accept and counted (reason proxy_untrusted), before it can name a client; 0.0.0.0/0 ::/0 trusts every "
     "peer."},
    {"proxyHeaderTimeout", &C::proxy_header_timeout, "10s",
     "With proxyProtocol: how long a new connection may take to send its whole PROXY header.",
     {.min = 100, .max = 3'600'000}},
    {"framing", config::one_of(&C::framing, {{"auto", Framing::detect}, {"non-transparent", Framing::lines}}), "auto",
     "auto: each frame is RFC 6587 octet-counted if it starts with a digit 1-9, else a line ended by LF, CRLF or NUL; "
     "non-transparent: lines only (for senders whose lines start with digits and have no PRI)."},
    keep_fields_property<C>(),
    port_header_property<C>(),
    client_ip_header_property<C>(),
    {"clientHostnameHeader", &C::client_hostname_header, "",
     "If set, the name under which each event carries the sender's host name, from reverse DNS done off the event loop "
     "once per connection (cached for hostnameCacheTtl; the IP when it has no name); a new connection is read once "
     "its name is known."},
    {"hostnameCacheTtl", &C::hostname_cache_ttl, "5m",
     "How long a reverse DNS answer for clientHostnameHeader is reused.", {.min = 0}},
    {"hostnameLookupTimeout", &C::hostname_lookup_timeout, "2s",
     "How long a new connection waits for its reverse DNS answer (clientHostnameHeader) before it is read with "
     "its address as the name (counted: sluice_source_hostname_lookups_given_up_total{reason=\"timeout\"}); a late "
     "answer is still cached. At most 64 lookups wait per io thread; beyond, the address is the name at once "
     "(reason skipped).",
     {.min = 10, .max = 600'000}},
    {"charset.default", config::parsed_as(&C::default_charset, kCharset, charset_from_name),
     "UTF-8",
     "Encoding of the frames: UTF-8 (invalid sequences become U+FFFD and are counted), ISO-8859-1 (converted to "
     "UTF-8), or none (bytes passed unchecked). charset.port.<port> sets it for one port."},
    {"idleTimeout", &C::idle_timeout, "0",
     "Close a connection that has sent nothing for this long (counted as connections_idle_closed); 0 = never.",
     {.min = 0}},
    {"backlog", &C::backlog, "4096",
     "listen() backlog: connections the kernel queues before the source accepts them (capped by net.core.somaxconn).",
     {.min = 1, .max = 1'000'000}},
    {"ssl", &C::ssl, "false",
     "TLS on every port of this source (RFC 5425; octet-counted and LF-framed syslog inside, detected per frame). "
     "Needs ssl.certificate and ssl.key, or keystore. A plain source beside it may listen on other ports."},
    {"ssl.certificate", &C::ssl_certificate, "",
     "PEM file: the server's certificate, then any intermediate certificates.", {}, {}, {"ssl.cert"}},
    {"ssl.key", &C::ssl_key, "", "PEM file: the certificate's private key (encrypted: give ssl.keyPassword)."},
    {"ssl.keyPassword", &C::ssl_key_password, "", "Password of an encrypted ssl.key (a keystore's is keystore-password)."},
    {"ssl.ca", &C::ssl_ca, "",
     "PEM file of the certificate authorities client certificates must chain to (clientAuth optional or required)."},
    {"ssl.clientAuth",
     config::one_of(&C::ssl_client_auth,
                    {{"none", ClientAuth::none}, {"optional", ClientAuth::optional}, {"required", ClientAuth::required}}),
     "none",
     "none: no client certificate asked for; optional: asked for, and one that is sent must verify; required: a "
     "client without a certificate that verifies is refused."},
    {"ssl.allowedPeers", &C::ssl_allowed_peers, "",
     "If set, only these clients: SHA-256 certificate fingerprints (SHA256:AB:CD:..., or 64 hex digits; a "
     "fingerprint listed here is let in without ssl.ca, as RFC 5425 §5.2 allows for self-signed certificates) and "
     "names matched against the certificate's subject CN and DNS names. Needs clientAuth optional or required."},
    {"ssl.protocols", config::flags_of(&C::ssl_protocols, kTlsVersions, "TLSv1.2 TLSv1.3"), "TLSv1.2 TLSv1.3",
     "TLS versions offered.", {}, {}, {"include-protocols"}},
    {"exclude-protocols", config::flags_of(&C::exclude_protocols, kTlsVersions, "TLSv1.2 TLSv1.3 SSLv3 TLSv1 TLSv1.1"),
     "", "Flume's: versions taken out of ssl.protocols (SSLv3, TLSv1 and TLSv1.1 are never on)."},
    {"ssl.ciphers", &C::ssl_ciphers, "",
     "TLS 1.2 cipher list in OpenSSL's syntax (e.g. ECDHE+AESGCM); empty: OpenSSL's default."},
    {"ssl.cipherSuites", &C::ssl_cipher_suites, "",
     "TLS 1.3 cipher suites, colon-separated (e.g. TLS_AES_256_GCM_SHA384); empty: OpenSSL's default."},
    {"include-cipher-suites", config::list_of(&C::include_cipher_suites, "a cipher suite's name", any_word), "",
     "Flume's: the only cipher suites offered, by their Java (IANA) names, e.g. "
     "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 TLS_AES_256_GCM_SHA384; instead of ssl.ciphers and ssl.cipherSuites. "
     "A TLS version left without a suite is turned off."},
    {"exclude-cipher-suites", config::list_of(&C::exclude_cipher_suites, "a cipher suite's name", any_word), "",
     "Flume's: cipher suites (Java names) taken out of include-cipher-suites, or out of OpenSSL's defaults."},
    {"ssl.handshakeTimeout", &C::ssl_handshake_timeout, "10s",
     "A connection that has not completed its TLS handshake this long after it was accepted is closed and counted "
     "(reason timeout).",
     {.min = 100, .max = 3'600'000}},
    {"ssl.maxHandshakes", &C::ssl_max_handshakes, "256",
     "TLS handshakes in progress at once (the source's, shared equally by its io threads, each share rounded up): each "
     "holds OpenSSL's state and "
     "buffers (tens of KiB). Further connections wait, unread, for a slot, at most ssl.handshakeTimeout from their "
     "accept (then refused, reason timeout); a handshake's own ssl.handshakeTimeout starts with its slot. Bounds what "
     "clients that open handshakes and never finish them can hold.",
     {.min = 1, .max = 1'000'000}},
    {"ssl.crl", &C::ssl_crl, "",
     "PEM file of certificate revocation lists: a client certificate revoked by its issuer's CRL is refused "
     "(reason revoked). The file must hold a current CRL of every CA that issues client certificates (one past its "
     "nextUpdate refuses every client of that CA); read again on SIGHUP. Empty: revocation is not checked. Needs "
     "ssl.clientAuth optional or required."},
    {"keystore", &C::keystore, "",
     "Flume's: a PKCS12 file with the certificate, its chain and key, instead of ssl.certificate and ssl.key."},
    {"keystore-password", &C::keystore_password, "", "Flume's: the keystore's password."},
    {"keystore-type", &C::keystore_type, "PKCS12",
     "Flume's: the keystore's format; PKCS12 only (convert a JKS one: keytool -importkeystore -deststoretype "
     "PKCS12).",
     {}, {"PKCS12", "pkcs12"}},
};
// clang-format on

// Flume's include/exclude-cipher-suites become ssl.ciphers and ssl.cipherSuites in OpenSSL's names.
static void check_flume_cipher_suites(const config::ComponentConfig& component, SyslogTcpConfig& c) {
  if (c.include_cipher_suites.empty() && c.exclude_cipher_suites.empty()) return;
  const char* flume = c.include_cipher_suites.empty() ? "exclude-cipher-suites" : "include-cipher-suites";
  if (!c.ssl_ciphers.empty() || !c.ssl_cipher_suites.empty())
    component.fail(flume, std::string("and ") + (c.ssl_ciphers.empty() ? "ssl.cipherSuites" : "ssl.ciphers") +
                              " are both set: give one of them");
  const OpensslCipherChoice choice = openssl_cipher_choice(c.include_cipher_suites, c.exclude_cipher_suites);
  if (!choice.unknown.empty())
    component.fail(flume, "names " + choice.unknown +
                              ", a cipher suite OpenSSL does not know (Java's name, e.g. "
                              "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)");
  for (const std::string& why : choice.ignored)
    spdlog::warn("{}: {}: ignored {}", component.where(flume).to_string(), component.full_key(flume), why);
  if (!choice.tls12_left) c.ssl_protocols = static_cast<uint8_t>(c.ssl_protocols & ~tls_1_2);
  if (!choice.tls13_left) c.ssl_protocols = static_cast<uint8_t>(c.ssl_protocols & ~tls_1_3);
  if (c.ssl_protocols == 0) component.fail(flume, "leaves no cipher suite for the TLS versions in ssl.protocols");
  c.ssl_ciphers = choice.tls12_left ? choice.tls12_ciphers : "";
  c.ssl_cipher_suites = choice.tls13_left ? choice.tls13_suites : "";
  c.cipher_property = flume;
}

// What the table cannot say about the ssl.* properties together; the files themselves are read
// (and checked) by TlsContext.
static void check_tls_properties(const config::ComponentConfig& component, const config::PropertyTable<C>& table,
                                 SyslogTcpConfig& c) {
  c.ssl_protocols = static_cast<uint8_t>(c.ssl_protocols & ~c.exclude_protocols);
  if (!c.ssl) {
    // A TLS setting on a plain source is a mistake that would look like security: refused.
    for (const config::Property<C>& row : table) {
      if (!row.name.starts_with("ssl.") && !row.name.starts_with("keystore") && !row.name.starts_with("exclude-") &&
          !row.name.starts_with("include-"))
        continue;
      std::vector<std::string_view> names = row.aliases;
      names.push_back(row.name);
      for (std::string_view name : names)
        if (component.properties.count(std::string(name)))
          component.fail(name, "is set but ssl is false: set ssl = true, or remove it");
    }
    return;
  }
  if (c.ssl_protocols == 0) component.fail("ssl.protocols", "leaves no TLS version (TLSv1.2, TLSv1.3)");
  check_flume_cipher_suites(component, c);
  const bool pem = !c.ssl_certificate.empty() || !c.ssl_key.empty();
  if (pem && !c.keystore.empty())
    component.fail("keystore", "and ssl.certificate/ssl.key are both set: give one of them");
  if (!pem && c.keystore.empty())
    component.fail("ssl", "is true but there is no certificate: set ssl.certificate and ssl.key (PEM), or keystore");
  if (pem && (c.ssl_certificate.empty() || c.ssl_key.empty()))
    component.fail(c.ssl_certificate.empty() ? "ssl.certificate" : "ssl.key",
                   "is missing: ssl.certificate and ssl.key go together");
  if (!c.ssl_ca.empty() && c.ssl_client_auth == ClientAuth::none)
    component.fail("ssl.ca",
                   "is set but ssl.clientAuth is none, so no client would be verified: set ssl.clientAuth = "
                   "optional or required");
  if (!c.ssl_crl.empty() && c.ssl_client_auth == ClientAuth::none)
    component.fail("ssl.crl",
                   "is set but ssl.clientAuth is none, so no client certificate would be checked: set "
                   "ssl.clientAuth = optional or required");
  if (!c.ssl_allowed_peers.empty() && c.ssl_client_auth == ClientAuth::none)
    component.fail("ssl.allowedPeers",
                   "needs ssl.clientAuth = optional or required: with none no client shows a certificate");
}

SyslogTcpConfig parse_syslog_tcp_config(const config::ComponentConfig& component,
                                        const config::PropertyTable<SyslogTcpConfig>& table) {
  std::vector<std::pair<std::string, std::string>> port_charsets;  // charset.port.<port> = name
  auto extra = [&](const std::string& key, const config::PropertyValue& given) {
    if (!key.starts_with("charset.port.")) return false;
    port_charsets.emplace_back(key, given.value);
    return true;
  };
  SyslogTcpConfig c = config::bind(table, component, extra);
  for (const auto& [key, name] : port_charsets) {
    const config::ValueContext ctx{component.full_key(key), component.where(key)};
    const auto port = static_cast<uint16_t>(config::parse_integer(key.substr(13), ctx, {.min = 1, .max = 65535}));
    const auto charset = charset_from_name(name);
    if (!charset) ctx.fail(name, kCharset);
    c.port_charsets[port] = *charset;
  }
  c.header_names =
      std::make_shared<HeaderNames>(HeaderNames{c.port_header, c.client_ip_header, c.client_hostname_header});
  if (c.ports.empty()) component.fail("ports", "is missing: list at least one TCP port to listen on");
  c.clients = ClientFilter(c.allow, c.deny);
  if (c.proxy_protocol != ProxyProtocol::none && c.proxy_trusted_from.empty())
    component.fail("proxyProtocol",
                   "needs proxyTrustedFrom: without it whoever reaches the port could claim any client address (and "
                   "pass allow/deny as it): list the balancers' networks in proxyTrustedFrom (e.g. 10.0.0.5 "
                   "10.0.1.0/24), or 0.0.0.0/0 ::/0 to trust every peer");
  if (c.proxy_protocol == ProxyProtocol::none && !c.proxy_trusted_from.empty())
    component.fail("proxyTrustedFrom", "is set but proxyProtocol is none: set proxyProtocol, or remove it");
  c.proxy_balancers = ClientFilter(c.proxy_trusted_from, {});
  check_tls_properties(component, table, c);
  for (const auto& [port, charset] : c.port_charsets)
    if (std::find(c.ports.begin(), c.ports.end(), port) == c.ports.end())
      component.fail("charset.port." + std::to_string(port), "names a port that is not in ports");
  return c;
}

int resolve_num_processors(int64_t configured) {
  if (configured > 0) return static_cast<int>(configured);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency() / 2));
}

}  // namespace sluice::syslog_tcp
