// The delivery window: takes handed over (acks=0) or awaiting their reports (acks >= 1),
// settled in the order taken: committed, discarded (counted) or rolled back with backoff; and
// what the shutdown deadline does to requests still in flight.
#include "sinks/kafka/kafka_sink.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "sinks/kafka/delivery_tracker.h"

namespace sluice::kafka {
namespace {

using namespace std::chrono_literals;
constexpr auto kRetryBackoffMin = 100ms;
constexpr auto kRetryBackoffMax = 10s;
// At the shutdown deadline, how much longer requests already in flight may take to be answered
// before they are purged too (their events then go back to the channel as possibly persisted).
constexpr auto kInFlightGrace = 1s;
// A producer that works again: the next new producer (after fatal errors, stalls) waits 1 s again.
constexpr std::chrono::milliseconds kProducerBackoffMin = 1s;
// unblock_window(): a head of the window older than this, waiting only for partitions the cluster
// says have no leader, makes the producer give back what it has not sent (once a second at most).
constexpr auto kUnblockAfter = 1s;
constexpr auto kUnblockAgain = 5s;
// A dead-letter round (dead_letters.cc) unanswered this long is given back (unblock_window()).
constexpr auto kDeadLetterPatience = 10s;
}  // namespace

// The takes at the head of the window whose every report has come, in order.
void KafkaSink::settle_finished() {
  while (!window_.empty() && window_.front()->done()) settle_front();
}

void KafkaSink::settle_front() {
  AwaitedTake* awaited = window_.front();
  if (send_dead_letters(*awaited)) return;  // settled once the dead-letter topic answers
  window_.pop_front();
  settle(*awaited);
  probe_->batch_done(Clock::now() - awaited->taken_at);
  awaited->release();
  if (window_.empty()) roll_back_window();
}

// Each rollback goes to the front of the channel: the newest take first, so that the oldest
// ends up in front and the retry keeps the order taken. (A take delivered after an older one
// failed is committed meanwhile: with a window, a failure reorders what is retried behind it.)
void KafkaSink::roll_back_window() {
  if (window_back_.empty()) return;
  for (size_t i = window_back_.size() - 1; i > 0; --i) put_back(std::move(window_back_[i]));
  roll_back(std::move(window_back_.front()));  // the oldest, and the backoff once for the whole window
  window_back_.clear();
}

// A head of the window that waits only for messages whose partitions the cluster says have no
// leader would wait for as long as that lasts, and every take behind it with it: librdkafka gives
// back what it has not sent (all of the producer's: those of other partitions go back to the
// channel too, unsent, and are taken again), and the take settles; taken again, the events of the
// partition without a leader go aside.
void KafkaSink::unblock_window() {
  // A shared producer may hold another sink's messages handed over (acks=0, committed when
  // librdkafka took them): a purge would lose them. Sinks that wait for their reports only retry.
  if (window_.empty() || producer_->handed_over_to()) return;
  const auto now = Clock::now();
  const AwaitedTake& head = *window_.front();
  // Its dead letters unanswered for long (the dead-letter topic's partition without a leader, too
  // few replicas): librdkafka would retry them for ever, and every take behind would wait. What
  // it has not sent is given back: the take settles, its events go back to the channel.
  if (head.dead_letters_sent && !head.done() && now - head.dead_letters_at >= kDeadLetterPatience &&
      now - last_unblock_ >= kUnblockAfter && !(&head == last_unblocked_head_ && now - last_unblock_ < kUnblockAgain)) {
    last_unblock_ = now;
    last_unblocked_head_ = &head;
    probe_->unblocked();
    producer_->purge(false);
    return;
  }
  // Once a second at most, and for one head once every kUnblockAgain: what it has in flight comes
  // back (refused by the broker) and is retried, then queued, and only then can be given back; each
  // purge sends every other queued message of the producer back to the channel meanwhile.
  if (head.done() || now - head.taken_at < kUnblockAfter || now - last_unblock_ < kUnblockAfter ||
      (&head == last_unblocked_head_ && now - last_unblock_ < kUnblockAgain))
    return;
  bool waiting = false;
  for (size_t i = 0; i < head.partitions.size(); ++i) {
    if (head.answered(i)) continue;
    const std::string& topic = !head.topics.empty() && head.topics[i] ? *head.topics[i] : config_.topic;
    const TopicView& v = destinations_.view(topic);
    if (v.known != TopicView::Known::exists || v.leader(head.partitions[i]) >= 0) return;  // it may yet be sent
    waiting = true;
  }
  if (!waiting) return;
  last_unblock_ = now;
  last_unblocked_head_ = &head;
  probe_->unblocked();
  producer_->purge(false);
}

// Shutting down and out of time: first what librdkafka has not sent is purged (it never
// reaches the broker, or, if it had been sent before and waits for a retry, reports
// possibly_persisted); requests in flight get kInFlightGrace more to be answered, then they are
// purged too, again and again (a request partly written to a stalled socket cannot be purged
// until the connection drops). After one more kInFlightGrace the sink stops waiting: what is
// still unanswered goes back to the channel as possibly persisted.
void KafkaSink::enforce_deadline() {
  const auto now = Clock::now();
  if (in_flight_at_ == Clock::time_point{}) {
    producer_->purge(false);
    in_flight_at_ = now + kInFlightGrace;
    give_up_at_ = in_flight_at_ + kInFlightGrace;
  } else if (now >= give_up_at_) {
    spdlog::error(
        "sink {}: requests still unanswered {} ms after the shutdown deadline; their events go back to "
        "the channel as possibly persisted",
        name_, std::chrono::duration_cast<std::chrono::milliseconds>(now - stop_deadline_.get()).count());
    while (!window_.empty()) settle_front();
  } else if (now >= in_flight_at_) {
    producer_->purge(true);
  }
}

// acks=0: committed once librdkafka has taken the batch; that is all acks=0 promises. What it
// refused goes back to the channel (retriable, or the shutdown deadline passed while its queue
// was full) or is discarded (retrying cannot help).
void KafkaSink::hand_over(Take take, Clock::time_point taken_at) {
  auto* in_flight = new HandedOverTake(std::move(take), probe_, request_.release_encoded());
  for (OutgoingMessage& m : request_.messages()) m.tracker = in_flight;
  const size_t refused = request_.produce(*producer_, stop_deadline_);
  if (refused == 0) {
    channel_.commit(in_flight->take());  // shares the batches: no copy of events
    probe_->sent(in_flight->take().events);
    probe_->committed(in_flight->take(), taken_at);
    in_flight->release();
    group_.settled(true);
    producer_backoff_ = kProducerBackoffMin;  // the producer works
    return;
  }
  uint64_t by_reason[kDeliveryErrorKinds] = {};
  uint64_t discarded = 0;
  int text_code = 0;
  Take leaving, back;
  split_take(
      in_flight->take(),
      [&](size_t i) {
        const OutgoingMessage& m = request_.messages()[i];
        if (!m.refusal) return true;
        const DeliveryReport report = report_of(m.refusal);
        ++by_reason[static_cast<int>(report.error)];
        text_code = m.refusal;
        const bool discard = classify(report.error, request_.destination_of(i)) == ErrorClass::discard;
        discarded += discard;
        return discard;
      },
      leaving, back);
  count_failures(by_reason, report_of(text_code).text, discarded, back.events);
  probe_->discarded(discarded);
  probe_->sent(leaving.events - discarded);
  channel_.commit(leaving);
  probe_->committed(leaving, taken_at);
  in_flight->release(static_cast<int64_t>(refused) + 1);  // no report comes for what librdkafka refused
  group_.settled(back.empty());
  roll_back(std::move(back));
}

// One line and the counters per reason for the events of a take that were not delivered.
void KafkaSink::count_failures(const uint64_t (&by_reason)[kDeliveryErrorKinds], const std::string& text,
                               uint64_t discarded, uint64_t rolled_back, uint64_t dead_lettered) {
  std::string consequence;
  if (dead_lettered)
    consequence = fmt::format("{} to the dead-letter topic {}", dead_lettered, config_.dead_letter_topic);
  if (discarded)
    consequence +=
        fmt::format("{}{} discarded (retrying cannot help; counted)", consequence.empty() ? "" : ", ", discarded);
  if (rolled_back)
    consequence += fmt::format("{}{} back to channel {}, retried in {} ms", consequence.empty() ? "" : ", ",
                               rolled_back, channel_.name(), backoff_.count());
  for (int r = 0; r < kDeliveryErrorKinds; ++r)
    if (by_reason[r]) probe_->failed(static_cast<DeliveryError>(r), by_reason[r], text, consequence);
}

// Commits what was delivered, discards what can never be (counted by reason), and rolls the
// rest back into the channel: only the failed events, so delivered ones are not sent twice.
void KafkaSink::settle(const AwaitedTake& awaited) {
  uint64_t by_reason[kDeliveryErrorKinds] = {};
  uint64_t dead_lettered[kDeliveryErrorKinds] = {};
  uint64_t discarded = 0, possibly_persisted = 0, dead_letters = 0;
  if (awaited.dead_letters_sent)  // its round ends here, answered or not
    probe_->dead_letters_waiting(-std::count_if(awaited.dead_letter_reason.begin(), awaited.dead_letter_reason.end(),
                                                [](DeliveryError r) { return r != DeliveryError::none; }));
  Take leaving, back;
  split_take(
      awaited.take(),
      [&](size_t i) {
        if (!awaited.answered(i)) {  // given up at shutdown: in flight, the broker may have it
          ++by_reason[static_cast<int>(DeliveryError::purged)];
          ++possibly_persisted;
          return false;
        }
        const DeliveryError error = awaited.error(i);
        // A dead letter: refused for good where it was meant to go, then the dead-letter topic's outcome.
        if (const DeliveryError refused =
                awaited.dead_letters_sent ? awaited.dead_letter_reason[i] : DeliveryError::none;
            refused != DeliveryError::none) {
          ++by_reason[static_cast<int>(refused)];
          if (error == DeliveryError::none) {
            ++dead_lettered[static_cast<int>(refused)];
            ++dead_letters;
            return true;
          }
          ++by_reason[static_cast<int>(error)];
          if (dead_letter_refused(error)) {  // the dead-letter topic refuses it too: never sent there again
            ++discarded;
            return true;
          }
          possibly_persisted += awaited.possibly_persisted(i);
          return false;  // back to the channel, as any delivery that may yet succeed
        }
        if (error == DeliveryError::none) return true;
        ++by_reason[static_cast<int>(error)];
        if (error == DeliveryError::too_large && !awaited.condemned_as_too_large(i)) return false;  // sent again
        const Destination destination{
            .topic_from_event = !awaited.topic_from_event.empty() && awaited.topic_from_event[i],
            .partition_from_event = !config_.partition_header.empty()};
        if (classify(error, destination) == ErrorClass::discard) {
          // With a dead-letter topic, one not sent there (the take given up at the shutdown
          // deadline) goes back to the channel: dead-lettered the next time.
          if (!config_.dead_letter_topic.empty()) return false;
          ++discarded;
          return true;
        }
        possibly_persisted += awaited.possibly_persisted(i);
        return false;
      },
      leaving, back);
  count_failures(by_reason, awaited.text(), discarded, back.events, dead_letters);
  for (int r = 0; r < kDeliveryErrorKinds; ++r)
    if (dead_lettered[r])
      probe_->dead_lettered(static_cast<DeliveryError>(r), dead_lettered[r], config_.dead_letter_topic);
  probe_->discarded(discarded);
  probe_->sent(leaving.events - discarded);
  // At least once: the broker may have these already; sending them again may duplicate them.
  if (possibly_persisted) probe_->possibly_duplicated(possibly_persisted);
  if (back.empty() && leaving.events > discarded) producer_backoff_ = kProducerBackoffMin;  // the producer works
  channel_.commit(leaving);
  probe_->committed(leaving, awaited.taken_at);
  group_.settled(back.empty());
  if (!back.empty())
    window_back_.push_back(std::move(back));
  else if (window_back_.empty())
    backoff_ = kRetryBackoffMin;  // delivered, and nothing older failed
}

// Puts undelivered events back at the front of the channel and backs off before the next
// take (doubling to 10 s), but never past the shutdown deadline.
void KafkaSink::roll_back(Take back) {
  if (back.empty()) {
    backoff_ = kRetryBackoffMin;
    return;
  }
  put_back(std::move(back));
  resume_at_ = Clock::now() + backoff_;  // no new take before then; reports are served meanwhile
  backoff_ = std::min(backoff_ * 2, std::chrono::duration_cast<std::chrono::milliseconds>(kRetryBackoffMax));
}

void KafkaSink::put_back(Take back) {
  probe_->rolled_back(back.events);
  channel_.rollback(std::move(back));
}

}  // namespace sluice::kafka
