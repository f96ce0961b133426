#pragma once
// Moving events from a channel that goes into its successor (a reload that changes a channel's
// settings, a shutdown with a retired disk channel left over).

#include <cstdint>

#include "agent/api/channel.h"

namespace sluice {

// Events of `from` into `to`, in order, as far as `to` has room; nothing drains `to` yet, so
// room is capacity minus what it holds. `from` commits what moved, without telling a sender
// that acknowledges (RELP) that it is stored: `to` does, when its sinks have delivered it.
// At most `max_events` move; with `only_what_close_keeps`, no batch that `to`'s close() could
// not keep (Channel::keeps_more: a stop, when `to`'s sinks have stopped and all it holds must
// reach its disk). Returns how many moved.
uint64_t move_events(Channel& from, Channel& to, uint64_t max_events = UINT64_MAX, bool only_what_close_keeps = false);

// True if the two channels keep their contents in a directory they share (a checkpointDir or
// dataDir of one is one of the other's, however it is spelled).
bool share_storage(const Channel& a, const Channel& b);

}  // namespace sluice
