#pragma once
// The property rows every syslog source has alike (those of where an event came from are every
// source's: sources/pipeline/origin_properties.h), written once: each source's table takes them
// for its own config struct (which has the members they name).

#include <cstdint>
#include <string>

#include "agent/api/property_table.h"
#include "sources/syslog/event_decoder.h"

namespace sluice::syslog {

// keepFields (Flume's): which header fields stay in the body.
template <class C>
config::Property<C> keep_fields_property() {
  return {"keepFields",
          config::flags_of(&C::keep_fields,
                           {{"none", 0},
                            {"false", 0},
                            {"all", keep_all},
                            {"true", keep_all},
                            {"priority", keep_priority},
                            {"version", keep_version},
                            {"timestamp", keep_timestamp},
                            {"hostname", keep_hostname}},
                           "none, all, or some of priority version timestamp hostname"),
          "none",
          "Header fields kept in the body: none, all, or a list of priority version timestamp hostname (Flume's; "
          "true = all, false = none).",
          {},
          {},
          {}};  // every field given: GCC 12 fails on the defaulted ones in a template
}

}  // namespace sluice::syslog
