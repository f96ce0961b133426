// Per-sender fairness (maxEventsPerSecondPerClient, maxBytesPerSecondPerClient): what a client's
// connections read is charged to its budget (sources/pipeline/client_rate.h); a connection whose
// client is over it is not read until the budget is back, so TCP pushes back on that sender
// alone and nothing is dropped. A stop lifts every hold: the drain reads to the end.
#include "sources/net/stream_worker.h"

#include <algorithm>

#include "sources/net/stream_connection.h"

namespace sluice::net {
namespace {

// How often held connections are looked at: the finest step of a hold.
constexpr uint64_t kHoldCheckMs = 10;
}  // namespace

bool StreamWorker::may_read(const Connection& conn) const {
  return reads_on(conn) && !conn.over_budget && !conn.reading_paused;
}

// Once its client is known (at open, or from its PROXY header).
void StreamWorker::know_budget(Connection* conn) {
  if (shared_.budgets) conn->budget = shared_.budgets->of(conn->peer, pipeline::monotonic_ns());
}

void StreamWorker::charge_client(Connection& conn, uint64_t events, uint64_t bytes) {
  // Not once the listeners (and the hold timer with them) are closed: the drain follows.
  if (!conn.budget || stopping_ || listeners_closed_ || !connections_.count(&conn)) return;
  const std::chrono::milliseconds wait = conn.budget->charge(events, bytes, pipeline::monotonic_ns());
  if (wait.count() <= 0) return;
  const uint64_t until = uv_now(&loop_) + static_cast<uint64_t>(wait.count());
  conn.held_until_ms = std::max(conn.held_until_ms, until);
  if (conn.over_budget) return;
  conn.over_budget = true;
  held_.insert(&conn);
  uv_read_stop(reinterpret_cast<uv_stream_t*>(&conn.handle));
  shared_.probe.client_held(counters_, conn.peer_text(), wait);
  if (!uv_is_active(reinterpret_cast<uv_handle_t*>(hold_timer_.get())))
    uv_timer_start(
        hold_timer_.get(), [](uv_timer_t* t) { static_cast<StreamWorker*>(t->data)->release_held(); }, kHoldCheckMs,
        kHoldCheckMs);
}

void StreamWorker::release_held() {
  const uint64_t now = uv_now(&loop_);
  for (Connection* conn : std::vector<Connection*>(held_.begin(), held_.end())) {
    if (now < conn->held_until_ms) continue;
    conn->over_budget = false;
    held_.erase(conn);
    conn->last_read_ms = now;  // a held connection was not idle
    if (may_read(*conn))
      uv_read_start(reinterpret_cast<uv_stream_t*>(&conn->handle), &StreamWorker::on_alloc, &StreamWorker::on_read);
  }
  if (held_.empty()) uv_timer_stop(hold_timer_.get());
}

// At a stop: every held connection is read again (the drain's grace is for reading to the end).
void StreamWorker::lift_holds() {
  for (Connection* conn : held_) {
    conn->over_budget = false;
    if (may_read(*conn))
      uv_read_start(reinterpret_cast<uv_stream_t*>(&conn->handle), &StreamWorker::on_alloc, &StreamWorker::on_read);
  }
  held_.clear();
}

}  // namespace sluice::net
