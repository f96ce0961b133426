#pragma once
// Moving events from a channel that goes into its successor (a reload that changes a channel's
// settings, a shutdown with a retired disk channel left over).

#include <cstdint>

#include "agent/api/channel.h"

namespace sluice {

// Events of `from` into `to`, in order, as far as `to` has room; nothing drains `to` yet, so
// room is capacity minus what it holds. `from` commits what moved, without telling a sender
// that acknowledges (RELP) that it is stored: `to` does, when its sinks have delivered it.
// At most `max_events` move. Returns how many moved.
uint64_t move_events(Channel& from, Channel& to, uint64_t max_events = UINT64_MAX);

}  // namespace sluice
