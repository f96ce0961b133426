#pragma once
// sluice-loadgen --protocol avro: each connection speaks Flume's Avro RPC as Flume's Avro sink does
// (sources/avro/avro_ipc.h): appendBatch calls of --batch events, each event a body (the
// template's line) and a few headers (timestamp, host, the connection), the handshake on the
// connection's first call; at most --window calls unanswered (Flume's sink: 1). An event counts as
// acknowledged when its call is answered OK; a call answered FAILED or with an error, and every
// unanswered call of a connection that breaks, is sent again (as Flume's sink rolls back and
// retries): at least once. At the end each connection waits (up to 30 s) for its answers; events
// still unanswered count as possibly lost.

#include "loadgen/sender.h"

namespace sluice::loadgen {

SendResult send_avro(const SendOptions& options);

}  // namespace sluice::loadgen
