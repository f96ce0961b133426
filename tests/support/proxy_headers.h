#pragma once
// PROXY protocol headers as a balancer sends them, for tests.

#include <string>

namespace sluice::test {

// A v2 header: PROXY (or LOCAL) over TCP/IPv4 from 192.0.2.7:51234 to 198.51.100.1:514, with
// `tlv` bytes after the addresses.
inline std::string proxy_v2_header(bool local = false, const std::string& tlv = "") {
  std::string h("\r\n\r\n\0\r\nQUIT\n", 12);
  h += static_cast<char>(local ? 0x20 : 0x21);
  h += static_cast<char>(0x11);
  const size_t length = 12 + tlv.size();
  h += static_cast<char>(length >> 8);
  h += static_cast<char>(length & 0xff);
  h += std::string("\xc0\x00\x02\x07", 4) + std::string("\xc6\x33\x64\x01", 4);
  h += std::string("\xc8\x22", 2) + std::string("\x02\x02", 2);
  return h + tlv;
}

}  // namespace sluice::test
