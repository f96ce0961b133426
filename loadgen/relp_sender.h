#pragma once
// sluice-loadgen --relp: each connection is a RELP session (rsyslog's protocol, as librelp's
// client speaks it): `open`, then `syslog` frames with at most --window unanswered, each event
// counted as acknowledged when its "rsp 200" comes back, and the time from its write to that
// reply kept (the ack latency: with the agent's ackAfter = kafka, until Kafka has it). A
// session that breaks (an error, the receiver's serverclose) is opened again and what had no
// reply is sent again with new transaction numbers, as librelp does: at least once. At the end
// each connection waits (up to 30 s) for its replies, then closes; events still unanswered
// count as possibly lost.

#include "loadgen/sender.h"

namespace sluice::loadgen {

SendResult send_relp(const SendOptions& options);

}  // namespace sluice::loadgen
