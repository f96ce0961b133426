// The remedy for a producer that cannot go on (a fatal error, a stalled partition:
// stall_watch.h): its takes settle, then a new producer, with backoff, and for stalls that come
// back soon a longer limit.
#include "sinks/kafka/kafka_sink.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace sluice::kafka {
namespace {

using namespace std::chrono_literals;
// Between new producers (after fatal errors, stalled partitions): doubling from 1 s to a minute.
constexpr std::chrono::milliseconds kProducerBackoffMax = 60s;
// A stalled producer's other partitions get this long to send what waits for them.
constexpr std::chrono::milliseconds kStalledFlush = 1s;
// Stalls this close together lengthen the limit for the next producer, up to kStallLimitMax.
constexpr std::chrono::milliseconds kStallMemory = 30min;
constexpr std::chrono::milliseconds kStallLimitMax = 10min;
// A producer replaced for new TLS files, with acks = 0: this long to send what it was handed.
constexpr std::chrono::milliseconds kRenewalFlush = 5s;
}  // namespace

// The producer's TLS files, looked at every sslReloadInterval: a change marks the producer (a
// shared one for all its sinks) to be replaced once the takes in flight settle (replace_producer).
void KafkaSink::look_at_tls_files() {
  if (!tls_files_) return;
  const auto now = Clock::now();
  if (now < next_tls_look_) return;
  next_tls_look_ = now + config_.ssl_reload_interval;
  if (!tls_files_->changed()) return;
  std::string files;
  for (const std::string& path : tls_files_->paths()) files += (files.empty() ? "" : ", ") + path;
  probe_->tls_files_changed(files);
  producer_->renew_credentials(true);
}

// Before the deadline: a second (no more than is left) to send what can be sent.
void KafkaSink::release_stalled_producer() {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(stop_deadline_.get() - Clock::now());
  producer_->release_stalled(std::clamp(left, std::chrono::milliseconds(0), kStalledFlush));
}

// A partition that truly has no leader (its only replica's broker gone) stalls every new producer
// too: each stall soon after the last doubles the limit (to kStallLimitMax), so that the purges that
// come with it thin out while the rest flows; a stall long after the last starts from the setting.
void KafkaSink::lengthen_stall_limit() {
  const auto now = Clock::now();
  const bool soon_after = last_stall_at_ != Clock::time_point{} && now - last_stall_at_ < kStallMemory;
  stall_limit_ = soon_after ? std::min(stall_limit_ * 2, std::max(kStallLimitMax, config_.stalled_partition_timeout))
                            : config_.stalled_partition_timeout;
  last_stall_at_ = now;
}

// The producer in use, from now on: the topics in use are taken up with it, and with acks=0 the
// sink hears of lost connections (what was written to them last is possibly lost).
void KafkaSink::use_producer() {
  destinations_.attach(producer_);
  if (config_.acks == "0") producer_->add_watcher(probe_);
  if (!config_.wait_for_delivery) producer_->handing_over(+1);
}

// The producer in use is left (replaced, or the sink stops).
void KafkaSink::leave_producer() {
  producer_->remove_watcher(probe_.get());
  if (!config_.wait_for_delivery) producer_->handing_over(-1);
}

// librdkafka's remedy for a fatal error, and ours for a stalled partition, is a new producer.
// What the old one held has been settled by now (acks >= 1: rolled back; acks = 0: counted as
// lost when it is destroyed).
void KafkaSink::replace_producer() {
  std::string reason;
  if (!producer_->needs_replacing(&reason)) return;
  // Not yet (the backoff) or not any more (stopping): the loop polls and asks again.
  if (Clock::now() < next_producer_at_ || stop_deadline_.passed()) return;
  // Only its TLS files changed: the running producer works, and stays if the new files do not load.
  const bool renewal = !producer_->stalled() && !producer_->fatal() && producer_->credentials_changed();
  std::shared_ptr<Producer> fresh;
  try {
    if (producer_->stalled()) lengthen_stall_limit();
    fresh = env_->producer(producer_settings_, config_.share_producer, stall_limit_);
  } catch (const config::ConfigError& e) {
    if (renewal) {
      producer_->renew_credentials(false);
      if (tls_files_) tls_files_->look_again();  // tried again at the next look
      probe_->tls_reloaded(false, e.what());
      return;
    }
    spdlog::error("sink {}: cannot create a new Kafka producer: {}; retrying in {} s", name_, e.what(),
                  producer_backoff_.count() / 1000);
  }
  if (renewal) {
    if (fresh) probe_->tls_reloaded(true);
    // acks = 0: what the old producer holds was handed over (committed); it gets a moment to send it.
    if (fresh && !config_.wait_for_delivery)
      producer_->flush(static_cast<int>(std::clamp<int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(stop_deadline_.get() - Clock::now()).count(), 0,
          kRenewalFlush.count())));
  }
  next_producer_at_ = Clock::now() + producer_backoff_;
  producer_backoff_ = std::min(producer_backoff_ * 2, kProducerBackoffMax);
  if (!fresh) return;
  leave_producer();
  std::atomic_store(&producer_, std::move(fresh));
  // Before use_producer() has its view ask; after the store, so that a stop that comes meanwhile
  // either finds this producer or is seen here.
  bound_questions(*producer_);
  use_producer();
  probe_->producer_replaced(reason);
}

}  // namespace sluice::kafka
