#pragma once
// The two ways a Kafka sink keeps track of a take's messages until librdkafka reports on each
// (on whichever thread polls), and the split of a take by outcome.
//
//   acks=0   HandedOverTake: committed at once; keeps the bytes alive for librdkafka and counts
//            what fails after all as lost after hand-over.
//   acks>=1  AwaitedTake: one slot per message; the sink settles it once every report is in (or
//            gives up on it at the shutdown deadline).
// Both free themselves when the last of their references (one per message taken by librdkafka,
// one for the sink) goes.

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/api/channel.h"
#include "sinks/kafka/kafka_sink_probe.h"
#include "sinks/kafka/producer.h"
#include "sinks/kafka/report_tally.h"

namespace sluice::kafka {

// acks=0: a take already committed to the channel, on its way to Kafka. Holds the take's
// batches and encoded payloads (the bytes librdkafka points at) until the last delivery report; the
// last one to let go frees it, on whichever thread polled. One reference per message taken by
// librdkafka plus one for the sink while it sends.
class HandedOverTake final : public DeliveryTracker {
 public:
  // `encoded`: the take's encoded payloads (request_builder.h), or null.
  HandedOverTake(Take take, std::shared_ptr<KafkaSinkProbe> probe, std::unique_ptr<std::string> encoded)
      : take_(std::move(take)),
        encoded_(std::move(encoded)),
        probe_(std::move(probe)),
        references_(static_cast<int64_t>(take_.events) + 1) {}

  void on_delivery(const DeliveryReport& report) override {
    if (report.error != DeliveryError::none) {
      {  // Rare, so a lock per failed message is fine.
        std::lock_guard lock(mutex_);
        ++failures_[static_cast<int>(report.error)];
        if (last_text_.empty()) last_text_ = report.text;
      }
      release();  // outside the lock: the last reference frees this, its mutex with it
      return;
    }
    probe_->written(report.broker, report.tick);  // (acks=0: written, not acknowledged)
    tally_release(*this);                         // (report_tally.h: once per run of reports)
  }
  void release(int64_t references = 1) {
    if (references_.fetch_sub(references, std::memory_order_acq_rel) != references) return;
    for (int r = 0; r < kDeliveryErrorKinds; ++r) {
      if (!failures_[r]) continue;
      probe_->lost_after_handover(static_cast<DeliveryError>(r), failures_[r], last_text_);
    }
    delete this;
  }
  const Take& take() const { return take_; }

 private:
  Take take_;
  const std::unique_ptr<std::string> encoded_;  // librdkafka reads the payloads here, in place
  std::shared_ptr<KafkaSinkProbe> probe_;
  std::atomic<int64_t> references_;
  std::mutex mutex_;
  uint64_t failures_[kDeliveryErrorKinds] = {};
  std::string last_text_;
};

// Splits a take into the slices of consecutive events that leave the channel (`leaves(i)`
// true: delivered, handed over or discarded) and those that go back; a disk-backed channel
// needs the actual slices to know which records may go.
template <class Leaves>
void split_take(const Take& take, Leaves&& leaves, Take& leaving, Take& back) {
  auto add_slice = [](Take& to, EventBatch part) {
    to.events += part.size();
    to.bytes += part.bytes();
    to.batches.push_back(std::move(part));
  };
  size_t index = 0;
  for (const EventBatch& batch : take.batches) {
    size_t run_start = 0;
    bool run_leaves = true;
    for (size_t i = 0; i < batch.size(); ++i, ++index) {
      const bool l = leaves(index);
      if (i > 0 && l != run_leaves) {
        add_slice(run_leaves ? leaving : back, batch.slice(run_start, i - run_start));
        run_start = i;
      }
      run_leaves = l;
    }
    if (!batch.empty()) add_slice(run_leaves ? leaving : back, batch.slice(run_start, batch.size() - run_start));
  }
}

// Splits a take by `part_of(i)`: 0 keeps event i in `kept`, k > 0 puts it in parts[k - 1] (which
// must be there); each part keeps its events' order, in slices of the take's batches.
template <class PartOf>
void split_take_into(const Take& take, PartOf&& part_of, Take& kept, std::vector<Take>& parts) {
  auto add_slice = [&](size_t part, EventBatch slice) {
    Take& to = part == 0 ? kept : parts[part - 1];
    to.events += slice.size();
    to.bytes += slice.bytes();
    to.batches.push_back(std::move(slice));
  };
  size_t index = 0;
  for (const EventBatch& batch : take.batches) {
    size_t run_start = 0, run_part = 0;
    for (size_t i = 0; i < batch.size(); ++i, ++index) {
      const size_t part = part_of(index);
      if (i > 0 && part != run_part) {
        add_slice(run_part, batch.slice(run_start, i - run_start));
        run_start = i;
      }
      run_part = part;
    }
    if (!batch.empty()) add_slice(run_part, batch.slice(run_start, batch.size() - run_start));
  }
}

// acks>=1: a take whose every message's outcome the sink waits for, one slot per message.
// Heap-allocated and reference-counted like HandedOverTake (one reference per message, one for
// the sink), because at shutdown the sink may stop waiting for a request stuck in flight: its
// late report, if any, still lands here, and the take's bytes stay alive for librdkafka.
class AwaitedTake {
 public:
  static AwaitedTake* create(Take take) { return new AwaitedTake(std::move(take)); }
  DeliveryTracker* tracker(size_t i) { return &slots_[i]; }
  bool done() const { return references_.load(std::memory_order_acquire) == 1; }  // only the sink's left
  const Take& take() const { return take_; }
  // Whether message i has its report; only then do error() and possibly_persisted() mean anything.
  bool answered(size_t i) const { return answered_[i].load(std::memory_order_acquire); }
  DeliveryError error(size_t i) const { return outcomes_[i].error; }
  bool possibly_persisted(size_t i) const { return outcomes_[i].possibly_persisted; }
  std::string text() const {
    std::lock_guard lock(mutex_);
    return text_;
  }
  // The sink lets go (after settling); the last report, or this, frees it.
  void release() { release(1); }
  void release(int64_t references) {  // (and `references` reports at once: report_tally.h)
    if (references_.fetch_sub(references, std::memory_order_acq_rel) == references) delete this;
  }
  // Set by the sink as it produces: what settle() needs once the sink's scratch is reused.
  std::vector<bool> topic_from_event;  // per message, when topicHeader applies
  // acks=0 (in a sink group, whose takes wait for their reports too): told what was written where.
  std::shared_ptr<KafkaSinkProbe> written_to;  // (shared: a late report may come after the sink is gone)
  // Where each message went, for a head of the window that waits only for partitions without a
  // leader (KafkaSink::unblock_window): its partition, and its topic when not the sink's own.
  std::vector<int32_t> partitions;
  std::vector<std::optional<std::string>> topics;  // empty: every one the sink's own topic
  Clock::time_point taken_at;
  // The take's encoded payloads (request_builder.h), or null: librdkafka reads them here, in place.
  std::unique_ptr<std::string> encoded;
  // deadLetterTopic: the messages refused for good were sent there (a second round of reports,
  // settled as theirs), each with the reason it was refused for (none: not a dead letter).
  bool dead_letters_sent = false;
  std::vector<DeliveryError> dead_letter_reason;
  std::unique_ptr<std::string> dead_letter_encoded;  // their payloads, encoded again for that round
  Clock::time_point dead_letters_at;                 // when they were sent (a round that takes too long is given back)
  // Messages librdkafka refused itself, at produce(): certainly too large (or to a refused topic).
  std::vector<bool> refused_locally;
  // On the sink's thread, the take settled by the first round: message i waits for its report
  // again (the sink adds the references: one per message reopened).
  void reopen(size_t i) {
    outcomes_[i] = Outcome{};
    answered_[i].store(false, std::memory_order_relaxed);
  }
  void add_references(int64_t n) { references_.fetch_add(n, std::memory_order_acq_rel); }
  // too_large from a broker condemns a whole record batch, the small records beside the one that
  // made it too large too (librdkafka does not split a batch as Java's producer does). Of a take's
  // messages refused as too large, those librdkafka refused itself and those at least half the size
  // of the largest are condemned; the others go back to the channel and are sent again (each round
  // condemns the largest: it ends). On the sink's thread, once every report is in; judged on the
  // first round's outcomes (send_dead_letters asks before it reopens any slot), kept for the take.
  bool condemned_as_too_large(size_t i) const {
    if (i < refused_locally.size() && refused_locally[i]) return true;
    if (too_large_seen_ < 0) {
      too_large_seen_ = 0;
      size_t index = 0;
      for (const EventBatch& batch : take_.batches)
        for (const EventRecord& e : batch) {
          if (answered(index) && outcomes_[index].error == DeliveryError::too_large)
            too_large_seen_ = std::max<int64_t>(too_large_seen_, e.length);
          ++index;
        }
    }
    return 2 * static_cast<int64_t>(record_length(i)) >= too_large_seen_;
  }

 private:
  explicit AwaitedTake(Take take)
      : take_(std::move(take)),
        slots_(take_.events),
        outcomes_(take_.events),
        answered_(take_.events),
        references_(static_cast<int64_t>(take_.events) + 1) {
    for (size_t i = 0; i < slots_.size(); ++i) slots_[i] = Slot{this, static_cast<uint32_t>(i)};
  }
  struct Slot final : DeliveryTracker {
    AwaitedTake* owner = nullptr;
    uint32_t index = 0;
    Slot() = default;
    Slot(AwaitedTake* o, uint32_t i) : owner(o), index(i) {}
    void on_delivery(const DeliveryReport& report) override { owner->record(index, report); }
  };
  struct Outcome {
    DeliveryError error = DeliveryError::none;
    bool possibly_persisted = false;
  };
  void record(uint32_t index, const DeliveryReport& report) {
    if (report.error == DeliveryError::none && written_to) written_to->written(report.broker, report.tick);
    if (report.error != DeliveryError::none) {
      outcomes_[index] = Outcome{report.error, report.possibly_persisted};
      std::lock_guard lock(mutex_);
      if (text_.empty()) text_ = report.text;
    }
    answered_[index].store(true, std::memory_order_release);
    tally_release(*this);
  }

  uint64_t record_length(size_t i) const {
    for (const EventBatch& batch : take_.batches) {
      if (i < batch.size()) return batch[i].length;
      i -= batch.size();
    }
    return 0;
  }

  Take take_;
  mutable int64_t too_large_seen_ = -1;  // the largest record refused as too large (-1: not yet looked)
  std::vector<Slot> slots_;
  std::vector<Outcome> outcomes_;
  std::vector<std::atomic<bool>> answered_;
  std::atomic<int64_t> references_;
  mutable std::mutex mutex_;
  std::string text_;
};

}  // namespace sluice::kafka
