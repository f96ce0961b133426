#pragma once
// What the code that cut a message out of its stream learnt about it on the way, handed with the
// message to the format that decodes it (event_maker.h).

namespace sluice::pipeline {

struct MessageTraits {
  bool truncated = false;  // cut short, or its sender did not finish it: the event is Incomplete
  // Every byte is below 0x80, as the framer's scan for the line's end saw (false: not looked at):
  // such a message is valid UTF-8 and Latin-1 alike, and the decoder skips its own check.
  bool ascii = false;
};

}  // namespace sluice::pipeline
