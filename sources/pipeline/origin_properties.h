#pragma once
// The property rows of where an event came from, every network source's alike, written once:
// each source's table takes them for its own config struct (which has the members they name).

#include "agent/api/property_table.h"

namespace sluice::pipeline {

// portHeader and clientIPHeader: the event's origin as headers.
template <class C>
config::Property<C> port_header_property() {
  return {"portHeader",
          &C::port_header,
          "",
          "If set, the name under which each event carries the local port it arrived on (json format; keyField port).",
          {},
          {},
          {}};
}
template <class C>
config::Property<C> client_ip_header_property() {
  return {"clientIPHeader",
          &C::client_ip_header,
          "",
          "If set, the name under which each event carries the sender's IP address (json format; keyField clientIP).",
          {},
          {},
          {}};
}

}  // namespace sluice::pipeline
