// A syslog source's delivery of a routed batch: required channels waited for, optional ones
// only with room at that moment (a copy they cannot take dropped and counted per channel),
// events routed nowhere counted, and a source's acknowledger told of required commits only.

#include <catch2/catch.hpp>

#include "channels/memory/memory_channel.h"
#include "sources/pipeline/channel_delivery.h"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

// Routes of its own, each event's route its first byte after the PRI ('0' + route).
class ByDigit final : public ChannelSelector {
 public:
  using ChannelSelector::ChannelSelector;
  uint8_t route(const EventBatchBuilder& builder) const override {
    return static_cast<uint8_t>(builder.last_bytes()[4] - '0');
  }
};

struct Acks : CommitTracker {
  std::vector<size_t> commits;  // per event of the storage
  void committed(size_t first, size_t count) override {
    for (size_t i = first; i < first + count; ++i) ++commits.at(i);
  }
};

struct DeliveryRig {
  std::vector<std::unique_ptr<MemoryChannel>> channels;
  std::shared_ptr<const ChannelSelector> selector;
  std::unique_ptr<pipeline::RouteCounters> counters;
  std::unique_ptr<pipeline::ChannelDelivery> delivery;
  std::vector<std::string> dropped_at_deadline, given_up;
  DeliveryRig(std::vector<size_t> capacities, std::vector<ChannelRoute> routes, Deadline deadline = Deadline::max(),
              std::chrono::milliseconds give_up_after = 0ms) {
    std::vector<Channel*> raw;
    for (size_t i = 0; i < capacities.size(); ++i) {
      channels.push_back(std::make_unique<MemoryChannel>("c" + std::to_string(i + 1),
                                                         MemoryChannelConfig{capacities[i], capacities[i], {}, 20}));
      raw.push_back(channels.back().get());
    }
    selector = std::make_shared<ByDigit>(std::move(routes));
    counters = std::make_unique<pipeline::RouteCounters>("r", raw, *selector);
    delivery = std::make_unique<pipeline::ChannelDelivery>(
        "r", raw, selector, *counters, "test", 10ms,
        pipeline::ChannelDelivery::Waiting{
            .before_try = [deadline] { return deadline; },
            .dropped = [this](const Channel& c, size_t) { dropped_at_deadline.push_back(c.name()); },
            .give_up_after = give_up_after,
            .gave_up = [this](const Channel& c) { given_up.push_back(c.name()); }});
  }
  // Events "<13>D..." whose D is each route, in order; the acknowledger expects what it is told.
  RoutedBatch batch(const std::string& routes, const std::shared_ptr<Acks>& acks = nullptr) {
    EventBatchBuilder builder;
    if (acks) builder.set_acknowledger(acks);
    for (size_t i = 0; i < routes.size(); ++i) {
      builder.append("<13>" + std::string(1, routes[i]) + " event " + std::to_string(i));
      builder.set_last_route(selector->route(builder));
    }
    RoutedBatch routed = builder.seal_routed(selector->routes().size());
    if (acks) acks->commits.assign(routes.size(), 0);
    return routed;
  }
  std::vector<std::string> drain(size_t channel) {
    std::vector<std::string> out;
    Take take = channels[channel]->take(1000, Clock::now());
    for (const EventBatch& b : take.batches)
      for (const EventRecord& e : b) out.emplace_back(b.raw(e));
    channels[channel]->commit(take);
    return out;
  }
};

}  // namespace

TEST_CASE("each route's events go into its channels only, in their order", "[delivery]") {
  DeliveryRig rig({100, 100, 100}, {{{0}, {}}, {{1, 2}, {}}});
  CHECK(rig.delivery->deliver(rig.batch("01011")));
  CHECK(rig.drain(0) == std::vector<std::string>{"<13>0 event 0", "<13>0 event 2"});
  const std::vector<std::string> route1{"<13>1 event 1", "<13>1 event 3", "<13>1 event 4"};
  CHECK(rig.drain(1) == route1);
  CHECK(rig.drain(2) == route1);
  CHECK(rig.counters->optional_dropped() == 0);
  CHECK(rig.counters->unrouted() == 0);
}

TEST_CASE("an optional channel without room drops its copy only, counted, and nothing waits for it", "[delivery]") {
  DeliveryRig rig({100, 3}, {{{0}, {1}}});
  const auto acks = std::make_shared<Acks>();
  CHECK(rig.delivery->deliver(rig.batch("00", acks)));
  CHECK(rig.delivery->deliver(rig.batch("00", acks)));  // c2 holds 2 of 3: this copy does not fit
  CHECK(rig.counters->optional_dropped() == 2);
  // Both batches report to `acks` (by index in their storage): the required channel's commit
  // counts once per batch; committing the optional copies counts nothing.
  CHECK(rig.drain(0).size() == 4);  // the required channel has every event
  CHECK(acks->commits == std::vector<size_t>{2, 2});
  CHECK(rig.drain(1).size() == 2);
  CHECK(acks->commits == std::vector<size_t>{2, 2});
  struct Samples : MetricsWriter {
    std::map<std::string, double> counters;
    void counter(const char* name, const char*, MetricLabels labels, double value) override {
      std::string key = name;
      for (const auto& [label, text] : labels) key += " " + label + "=" + text;
      counters[key] = value;
    }
    void gauge(const char*, const char*, MetricLabels, double) override {}
    void histogram(const char*, const char*, MetricLabels, const DurationHistogram&) override {}
    void flume(std::string_view, std::string) override {}
  } samples;
  rig.counters->write_metrics(samples);
  CHECK(samples.counters ==
        std::map<std::string, double>{{"sluice_source_optional_copies_dropped_total source=r channel=c2", 2},
                                      {"sluice_source_events_unrouted_total source=r", 0}});
}

TEST_CASE("a route with no required channel is answered once delivered, one with no channel is counted", "[delivery]") {
  DeliveryRig rig({100, 100}, {{{}, {}}, {{}, {1}}, {{0}, {}}});
  const auto acks = std::make_shared<Acks>();
  CHECK(rig.delivery->deliver(rig.batch("0122", acks)));
  // Sealed in route order: [0], [1], [2, 2]. The first two were answered by the delivery itself.
  CHECK(acks->commits == std::vector<size_t>{1, 1, 0, 0});
  CHECK(rig.counters->unrouted() == 1);
  Take take = rig.channels[0]->take(10, Clock::now());
  rig.channels[0]->commit(take);
  CHECK(acks->commits == std::vector<size_t>{1, 1, 1, 1});
  CHECK(rig.delivery->commits_expected(0) == 1);
  CHECK(rig.delivery->commits_expected(2) == 1);
}

TEST_CASE("a required channel still full at the deadline drops its part, the other routes are delivered",
          "[delivery]") {
  DeliveryRig rig({1, 100}, {{{0}, {}}, {{1}, {}}}, Clock::now() + 50ms);
  CHECK(!rig.delivery->deliver(rig.batch("0011")));
  CHECK(rig.dropped_at_deadline == std::vector<std::string>{"c1"});
  CHECK(rig.drain(1).size() == 2);
}

TEST_CASE("a full channel past give_up_after: the rest of the batch is not tried, what was taken before is said",
          "[delivery]") {
  // Route 0 into c1; route 1 into c2 (full) then c3; route 2 into c3.
  DeliveryRig rig({100, 1, 100}, {{{0}, {}}, {{1, 2}, {}}, {{2}, {}}}, Deadline::max(), 50ms);
  REQUIRE(rig.delivery->deliver(rig.batch("1")));  // c2 full now
  rig.drain(2);
  CHECK_FALSE(rig.delivery->deliver(rig.batch("0112")));
  CHECK(rig.delivery->gave_up());
  CHECK(rig.given_up == std::vector<std::string>{"c2"});
  CHECK(rig.delivery->held_before_give_up() == 1);  // route 0's event, in c1: its sender resends it
  CHECK(rig.drain(0).size() == 1);
  CHECK(rig.drain(2).empty());  // route 1's c3 and route 2 not tried
  rig.drain(1);
  CHECK(rig.delivery->deliver(rig.batch("012")));  // room again: all of it
  CHECK_FALSE(rig.delivery->gave_up());
  CHECK(rig.delivery->held_before_give_up() == 0);
}
