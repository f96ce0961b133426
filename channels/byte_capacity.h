#pragma once
// byteCapacity and byteCapacityBufferPercentage, Flume's memory channel's: the rows the memory and
// spillablememory channels share, written once, for config structs with the members they name.

#include <cstdint>

#include "agent/api/property_table.h"

namespace sluice {

template <class C>
config::Property<C> byte_capacity_property() {
  return {"byteCapacity",
          &C::byte_capacity,
          "256m",
          "Max bytes of event data held in memory, so that memory is bounded whatever the events' size: beyond it a "
          "memory channel's puts wait (backpressure; one batch may exceed it when the channel is empty) and a "
          "spillablememory channel's batches go to disk. 0: bounded by the event count alone (capacity, "
          "memoryCapacity). Not for type file.",
          {.min = 0},
          {},
          {}};  // every field given: GCC 12 fails on the defaulted ones in a template
}

template <class C>
config::Property<C> byte_capacity_buffer_property() {
  return {"byteCapacityBufferPercentage",
          &C::byte_capacity_buffer_percentage,
          "20",
          "Percent of byteCapacity kept free for headers, as in Flume: the byte bound of what is held in memory is "
          "byteCapacity * (100 - this) / 100.",
          {.min = 0, .max = 99},
          {},
          {}};
}

}  // namespace sluice
