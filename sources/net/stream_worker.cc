// The io thread's loop: made, run, handed connections, stopped; batches put, connections
// closed. Admission (stream_admission.cc), reading (stream_reading.cc), replies
// (stream_replies.cc) and the drain (stream_drain.cc) are the other rooms of StreamWorker.
#include "sources/net/stream_worker.h"

#include <algorithm>
#include <chrono>
#include <climits>

#include "sources/net/stream_connection.h"

namespace sluice::net {
namespace {

constexpr size_t kReadChunk = kIoReadChunk;
constexpr auto kPutSlice = std::chrono::milliseconds(500);

}  // namespace

StreamWorker::StreamWorker(IoShared& shared, int index)
    : shared_(shared),
      config_(shared.config),
      counters_(shared.probe.io(index)),
      handshake_slots_(handshake_slots_per_io_thread(config_.ssl_max_handshakes, shared.io_threads)),
      read_buffer_(kReadChunk),
      plain_buffer_(shared.tls ? kReadChunk : 0),
      names_(static_cast<uint64_t>(config_.hostname_cache_ttl.count())),
      maker_(
          shared.events.make(), shared.events.kind(), shared.interceptors, config_.header_names,
          {shared.source_name,
           shared.channels,
           shared.selector,
           shared.routes,
           "io thread " + std::to_string(index) + " is not reading its sockets (TCP backpressure on the senders)",
           kPutSlice,
           {.before_try =
                [this] {
                  // A reload's request to let go of the ports is served while a full
                  // channel holds this loop.
                  Deadline deadline;
                  bool stop_accepting = false;
                  {
                    std::lock_guard lock(mutex_);
                    deadline = shutdown_deadline_;  // set once a stop with a deadline has begun
                    stop_accepting = stop_accepting_requested_ || stop_requested_;
                  }
                  if (stop_accepting) serve_stop_accepting();
                  return deadline;
                },
            .dropped = [this](const Channel& channel,
                              size_t events) { shared_.probe.dropped_at_shutdown(counters_, events, channel.name()); },
            .give_up_after = shared.protocol.refuse_when_full_after(),
            .gave_up = [this](const Channel& channel) { full_channel_ = channel.name(); }}},
          config_.batch_size, config_.batch_size * 128) {
  uv_loop_init(&loop_);
  loop_.data = this;
  uv_async_init(&loop_, &wakeup_, &StreamWorker::on_wakeup);
  wakeup_.data = this;
  uv_prepare_init(&loop_, &prepare_);
  prepare_.data = this;
  uv_prepare_start(&prepare_, &StreamWorker::on_prepare);
  if (shared_.protocol.answers()) {
    uv_async_init(&loop_, &acks_async_, &StreamWorker::on_acks_ready);
    acks_async_.data = this;
    waker_ = std::make_shared<AckWaker>(&acks_async_);
    farewell_timer_ = std::make_unique<uv_timer_t>();  // started while a farewell lingers
    uv_timer_init(&loop_, farewell_timer_.get());
    farewell_timer_->data = this;
  }
  if (const auto timeout = config_.idle_timeout.count(); timeout > 0) {
    idle_timer_ = std::make_unique<uv_timer_t>();
    uv_timer_init(&loop_, idle_timer_.get());
    idle_timer_->data = this;
    const uint64_t every = static_cast<uint64_t>(std::clamp<int64_t>(timeout / 4, 10, 1000));
    uv_timer_start(
        idle_timer_.get(), [](uv_timer_t* t) { static_cast<StreamWorker*>(t->data)->close_idle(); }, every, every);
  }
  if (const auto age = config_.max_connection_age.count(); age > 0) {
    age_jitter_.seed(std::random_device{}());
    age_timer_ = std::make_unique<uv_timer_t>();
    uv_timer_init(&loop_, age_timer_.get());
    age_timer_->data = this;
    const uint64_t every = static_cast<uint64_t>(std::clamp<int64_t>(age / 4, 10, 1000));
    uv_timer_start(
        age_timer_.get(), [](uv_timer_t* t) { static_cast<StreamWorker*>(t->data)->retire_aged(); }, every, every);
  }
  if (shared_.budgets) {  // maxEventsPerSecondPerClient: started while a connection is held
    hold_timer_ = std::make_unique<uv_timer_t>();
    uv_timer_init(&loop_, hold_timer_.get());
    hold_timer_->data = this;
  }
  if (shared_.resolver) {  // clientHostnameHeader: reverse lookups, bounded by hostnameLookupTimeout
    uv_async_init(&loop_, &names_async_, &StreamWorker::on_names);
    names_async_.data = this;
    inbox_ = std::make_shared<ReverseResolver::Inbox>(&names_async_);
    lookup_timer_ = std::make_unique<uv_timer_t>();
    uv_timer_init(&loop_, lookup_timer_.get());
    lookup_timer_->data = this;
    const auto every =
        static_cast<uint64_t>(std::clamp<int64_t>(config_.hostname_lookup_timeout.count() / 4, 10, 1000));
    uv_timer_start(
        lookup_timer_.get(), [](uv_timer_t* t) { static_cast<StreamWorker*>(t->data)->check_lookups(); }, every, every);
  }
  if (shared_.tls || config_.proxy_protocol != ProxyProtocol::none) {  // handshakes and PROXY headers
    handshake_timer_ = std::make_unique<uv_timer_t>();
    uv_timer_init(&loop_, handshake_timer_.get());
    handshake_timer_->data = this;
    const int64_t shortest =
        std::min(shared_.tls ? config_.ssl_handshake_timeout.count() : INT64_MAX,
                 config_.proxy_protocol != ProxyProtocol::none ? config_.proxy_header_timeout.count() : INT64_MAX);
    const auto every = static_cast<uint64_t>(std::clamp<int64_t>(shortest / 4, 25, 1000));
    uv_timer_start(
        handshake_timer_.get(), [](uv_timer_t* t) { static_cast<StreamWorker*>(t->data)->check_handshakes(); }, every,
        every);
  }
}

StreamWorker::~StreamWorker() {
  if (thread_.joinable()) thread_.join();
  if (!ran_) {  // never started: close the handles here
    close_all_handles();
    uv_run(&loop_, UV_RUN_DEFAULT);
  }
  uv_loop_close(&loop_);
}

std::vector<uint16_t> StreamWorker::start_accepting(const config::ComponentConfig& component,
                                                    const std::vector<uint16_t>& ports, Acceptor::Deal deal) {
  acceptor_ = std::make_unique<Acceptor>(&loop_, config_, shared_.probe, counters_, shared_.open_connections,
                                         std::move(deal), shared_.listeners.get());
  std::vector<uint16_t> bound;
  for (size_t i = 0; i < ports.size(); ++i) bound.push_back(acceptor_->listen_on(component, ports[i], i));
  return bound;
}

void StreamWorker::run() {
  ran_ = true;
  thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
}

bool StreamWorker::hand_over(int fd, uint16_t port, const sockaddr_storage& peer) {
  {
    std::lock_guard lock(mutex_);
    if (loop_ended_) return false;
    incoming_.push_back({fd, port, peer});
  }
  uv_async_send(&wakeup_);
  return true;
}

void StreamWorker::stop_accepting(Deadline wait_until) {
  std::unique_lock lock(mutex_);
  stop_accepting_requested_ = true;
  uv_async_send(&wakeup_);
  // Served by the loop, or by a put blocked on a full channel (flush): promptly either way.
  state_changed_.wait_until(lock, wait_until, [&] { return accepting_stopped_flag_ || loop_ended_; });
}

void StreamWorker::request_stop(Deadline deadline) {
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
    shutdown_deadline_ = deadline;
  }
  uv_async_send(&wakeup_);
}

bool StreamWorker::wait_finished(Deadline deadline) {
  std::unique_lock lock(mutex_);
  return state_changed_.wait_until(lock, deadline, [&] { return finished_; });
}

void StreamWorker::join() {
  if (thread_.joinable()) thread_.join();
}

void StreamWorker::on_wakeup(uv_async_t* handle) {
  auto* self = static_cast<StreamWorker*>(handle->data);
  std::vector<Incoming> incoming;
  bool stop = false, stop_accepting = false;
  {
    std::lock_guard lock(self->mutex_);
    incoming.swap(self->incoming_);
    stop = self->stop_requested_;
    stop_accepting = self->stop_accepting_requested_;
  }
  // Handed over before the stop: opened and drained like every other connection.
  for (const Incoming& in : incoming) self->open_connection(in.fd, in.port, in.peer);
  if (stop_accepting || stop) self->serve_stop_accepting();
  if (stop && !self->stopping_)
    self->shut_down();
  else if (stop)
    self->bound_grace();  // a stop begun without a deadline (a reload's) now has one
}

// The backlog accepted, the listeners closed: from here on the ports are free for another source.
void StreamWorker::serve_stop_accepting() {
  if (listeners_closed_) return;
  if (acceptor_) acceptor_->accept_backlog();
  close_listeners();
  {
    std::lock_guard lock(mutex_);
    accepting_stopped_flag_ = true;
  }
  state_changed_.notify_all();
}

void StreamWorker::on_prepare(uv_prepare_t* handle) { static_cast<StreamWorker*>(handle->data)->flush(); }

void StreamWorker::close_connection(Connection* conn) {
  if (!connections_.erase(conn)) return;
  if (conn->awaiting_handshake_slot) {
    awaiting_handshake_.erase(std::find(awaiting_handshake_.begin(), awaiting_handshake_.end(), conn));
    publish_handshakes();
  }
  release_handshake_slot(conn);
  held_.erase(conn);
  farewells_.erase(conn);
  if (const auto it = lookups_.find(conn->pending_lookup); it != lookups_.end())
    it->second.conn = nullptr;                                    // its answer must not touch it
  if (AckQueue* acks = conn->acks()) acks->connection = nullptr;  // replies still to come go nowhere
  counters_.closed.add(1);
  shared_.open_connections.fetch_sub(1, std::memory_order_relaxed);
  uv_close(reinterpret_cast<uv_handle_t*>(&conn->handle),
           [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
}

void StreamWorker::close_listeners() {
  if (listeners_closed_) return;
  listeners_closed_ = true;
  if (acceptor_) acceptor_->close();
  if (idle_timer_) uv_close(reinterpret_cast<uv_handle_t*>(idle_timer_.get()), nullptr);
  if (age_timer_) uv_close(reinterpret_cast<uv_handle_t*>(age_timer_.get()), nullptr);
  if (hold_timer_) uv_close(reinterpret_cast<uv_handle_t*>(hold_timer_.get()), nullptr);
  if (handshake_timer_) uv_close(reinterpret_cast<uv_handle_t*>(handshake_timer_.get()), nullptr);
  if (lookup_timer_) uv_close(reinterpret_cast<uv_handle_t*>(lookup_timer_.get()), nullptr);
}

void StreamWorker::close_all_handles() {
  close_listeners();
  if (drain_timer_) uv_close(reinterpret_cast<uv_handle_t*>(drain_timer_.get()), nullptr);
  if (farewell_timer_) uv_close(reinterpret_cast<uv_handle_t*>(farewell_timer_.get()), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&wakeup_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&prepare_), nullptr);
  if (waker_) {
    waker_->detach();  // commits after this find no loop to wake
    uv_close(reinterpret_cast<uv_handle_t*>(&acks_async_), nullptr);
  }
  if (inbox_) {
    inbox_->detach();  // answers after this are dropped: nothing waits for a running lookup
    uv_close(reinterpret_cast<uv_handle_t*>(&names_async_), nullptr);
  }
}

}  // namespace sluice::net
