// Where a take's messages go (destinations.h): produced, refused, or set aside until their
// partition is served (aside_takes.h); what waits aside goes when it may, or back to the channel.
#include "sinks/kafka/kafka_sink.h"

#include <algorithm>

#include "sinks/kafka/delivery_tracker.h"

namespace sluice::kafka {

// Each message's partition and fate. The sink's own topic with one partition for every message
// (pinned: the seed's shape) is decided once; otherwise message by message, each topic's view
// asked once per take.
Take KafkaSink::route(Take take) {
  std::vector<OutgoingMessage>& messages = request_.messages();
  const std::vector<std::optional<std::string>>& topics = request_.topics();
  const size_t n = messages.size();
  const bool per_message = !topics.empty() || !config_.partition_header.empty() || config_.partition < 0;
  if (!per_message && n > 0) {
    // Every message to the sink's own topic and pinned partition (the seed's shape): one decision,
    // and nothing to do per message while that partition is served.
    const Destinations::Decision d =
        destinations_.decide(config_.topic, destinations_.view(config_.topic), messages[0].partition, {}, false);
    if (d.fate == Fate::produce) return take;
    fates_.assign(n, d.fate);
    if (d.fate == Fate::refuse)
      for (OutgoingMessage& m : messages) m.refusal = d.refusal;
  } else {
    fates_.assign(n, Fate::produce);
  }
  bool all_produced = per_message;  // (the take's one decision above was not to produce)
  const std::string* last_topic = nullptr;
  const TopicView* view = nullptr;
  bool valid = true;
  for (size_t i = 0; per_message && i < n; ++i) {
    OutgoingMessage& m = messages[i];
    const std::string& topic = request_.topic_at(i);
    if (!last_topic || *last_topic != topic) {
      last_topic = &topic;
      valid = is_valid_topic_name(topic);
      if (valid) view = &destinations_.view(topic);
    }
    if (!valid) {  // Kafka would refuse the name (e.g. "postfix/smtpd"): no need to ask it
      fates_[i] = Fate::refuse;
      m.refusal = kErrTopicException;
      all_produced = false;
      continue;
    }
    const Destinations::Decision d = destinations_.decide(
        topic, *view, m.partition, std::string_view(m.key ? m.key : "", m.key_length), m.key != nullptr);
    m.partition = d.partition;
    fates_[i] = d.fate;
    if (d.fate == Fate::refuse) m.refusal = d.refusal;
    all_produced &= d.fate == Fate::produce;
  }
  if (all_produced) return take;
  // What waits goes aside, one part per destination in the order taken; the rest stays.
  std::vector<Take> parts;
  std::vector<std::pair<std::string, int32_t>> part_destinations;
  std::vector<size_t> part_of(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (fates_[i] != Fate::aside) continue;
    std::pair<std::string, int32_t> destination{request_.topic_at(i), messages[i].partition};
    const auto known = std::find(part_destinations.begin(), part_destinations.end(), destination);
    part_of[i] = static_cast<size_t>(known - part_destinations.begin()) + 1;
    if (known == part_destinations.end()) {
      part_destinations.push_back(std::move(destination));
      parts.emplace_back();
    }
  }
  if (parts.empty()) return take;  // refused ones only: they stay, to be settled as refused
  Take kept;
  split_take_into(
      take, [&](size_t i) { return part_of[i]; }, kept, parts);
  const auto now = Clock::now();
  for (size_t k = 0; k < parts.size(); ++k) {
    const bool from_event = part_destinations[k].first != config_.topic || !config_.topic_template.empty();
    probe_->set_aside(parts[k].events);
    aside_.add({.topic = std::move(part_destinations[k].first),
                .partition = part_destinations[k].second,
                .topic_from_event = from_event,
                .take = std::move(parts[k]),
                .since = now});
  }
  // The messages that stay, in order (their payloads, keys and headers live in the builder).
  std::vector<bool> stays(n);
  for (size_t i = 0; i < n; ++i) stays[i] = fates_[i] != Fate::aside;
  request_.keep(stays);
  return kept;
}

// What waits aside and may go now goes, in the order taken, as long as the window has room;
// what can never go (its topic is missing or refused) is settled as refused.
void KafkaSink::send_aside() {
  if (aside_.empty()) return;
  const auto now = Clock::now();
  std::vector<Take> ready;
  std::vector<std::pair<AsideTake, int>> refused;  // and the refusal
  aside_.take_out_if([&](AsideTake& entry) {
    int refusal = 0;
    switch (destinations_.fate_of_aside(entry.topic, entry.partition, &refusal)) {
      case Fate::aside: return false;
      case Fate::produce:
        // In takes of at most batchSize (an entry grows with every take while it waits), as far as
        // the window has room.
        while (!entry.take.empty() && !(config_.wait_for_delivery && window_.size() + ready.size() >= max_in_flight_))
          ready.push_back(take_front(entry.take, batch_size_));
        return entry.take.empty();
      case Fate::refuse: refused.emplace_back(std::move(entry), refusal); return true;
    }
    return false;
  });
  for (auto& [entry, refusal] : refused) settle_refused_aside(std::move(entry), refusal, now);
  for (Take& take : ready) send(std::move(take));  // routed again: a part may go aside again
}

// An aside part whose topic the cluster does not have (and the sink may not create) or refuses:
// discarded when the topic came from the event (as a failed delivery would be), counted.
void KafkaSink::settle_refused_aside(AsideTake entry, int refusal, Clock::time_point now) {
  const DeliveryReport report = report_of(refusal);
  uint64_t by_reason[kDeliveryErrorKinds] = {};
  by_reason[static_cast<int>(report.error)] = entry.take.events;
  const bool discard = classify(report.error, {.topic_from_event = entry.topic_from_event}) == ErrorClass::discard;
  if (discard && !config_.dead_letter_topic.empty()) {
    dead_letter_aside(std::move(entry), refusal, now);
    return;
  }
  count_failures(by_reason, report.text, discard ? entry.take.events : 0, discard ? 0 : entry.take.events);
  if (discard) {
    probe_->discarded(entry.take.events);
    channel_.commit(entry.take);
    probe_->committed(entry.take, now);
  } else {
    roll_back(std::move(entry.take));
  }
}

void KafkaSink::give_back_aside() {
  if (aside_.empty()) return;
  std::deque<AsideTake> all = aside_.take_all();
  // The newest first, each to the channel's front: the oldest ends up in front.
  for (auto it = all.rbegin(); it != all.rend(); ++it) put_back(std::move(it->take));
  probe_->aside_now(0);
}

}  // namespace sluice::kafka
