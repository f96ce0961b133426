// One way to make an event: a message decoded by the source's format, stamped with where it
// came from, through the interceptors, routed; the batch put into its routes' channels.

#include <catch2/catch.hpp>

#include "channels/memory/memory_channel.h"
#include "sources/pipeline/event_maker.h"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

// A format whose events are their messages, whole, and the headers "n" (their number); a message
// "bad..." is one it cannot read (counted invalid, kept).
class Whole final : public pipeline::EventFormat {
 public:
  int64_t begin_read() override { return 1700000000000 + reads_++; }  // the maker's first: when it is made
  EventRecord& decode(std::string_view message, pipeline::MessageTraits, size_t, EventBatchBuilder& batch,
                      pipeline::MadeTally& tally) override {
    EventRecord& e = batch.append(message);
    if (message.starts_with("bad")) ++tally.invalid;
    HeaderWriter headers;
    headers.set("n", std::to_string(++made_));
    batch.set_last_headers(headers.block());
    return e;
  }

 private:
  int64_t reads_ = 0;
  int made_ = 0;
};

// Drops the events whose body starts with "drop"; stamps the others with the read's time.
class DropSome final : public Interceptor {
 public:
  bool intercept(InterceptedEvent& event) const override {
    if (event.body().starts_with("drop")) return false;
    event.set_header("at", std::to_string(event.now_ms()));
    return true;
  }
  std::optional<std::vector<std::string>> headers_touched() const override { return std::vector<std::string>{"at"}; }
};

// Events whose body ends in '1' take route 1.
class ByLastDigit final : public ChannelSelector {
 public:
  using ChannelSelector::ChannelSelector;
  uint8_t route(const EventBatchBuilder& builder) const override {
    const std::string_view bytes = builder.last_bytes().substr(0, builder.last().length);
    return bytes.ends_with('1') ? 1 : 0;
  }
};

struct MakerRig {
  std::vector<std::unique_ptr<MemoryChannel>> channels;
  std::shared_ptr<const ChannelSelector> selector;
  std::unique_ptr<pipeline::RouteCounters> counters;
  std::unique_ptr<pipeline::EventMaker> maker;
  explicit MakerRig(size_t batch_size) {
    std::vector<Channel*> raw;
    for (int i = 0; i < 2; ++i) {
      channels.push_back(
          std::make_unique<MemoryChannel>("c" + std::to_string(i), MemoryChannelConfig{100, 100, {}, 20}));
      raw.push_back(channels.back().get());
    }
    selector = std::make_shared<ByLastDigit>(std::vector<ChannelRoute>{{{0}, {}}, {{1}, {}}});
    counters = std::make_unique<pipeline::RouteCounters>("s", raw, *selector);
    std::vector<std::unique_ptr<Interceptor>> interceptors;
    interceptors.push_back(std::make_unique<DropSome>());
    maker = std::make_unique<pipeline::EventMaker>(
        std::make_unique<Whole>(), EventKind::plain, std::make_shared<const InterceptorChain>(std::move(interceptors)),
        std::make_shared<const HeaderNames>(HeaderNames{"port", "clientIP", "clientHostname"}),
        pipeline::ChannelDelivery("s", raw, selector, *counters, "test", 10ms,
                                  {.before_try = [] { return Deadline::max(); }, .dropped = {}}),
        batch_size, 1024);
  }
  // The events channel `c` holds, each as "body port clientIP clientHostname n at".
  std::vector<std::string> held(size_t c) {
    std::vector<std::string> out;
    const Take take = channels[c]->take(100, Clock::now());
    char scratch[24];
    for (const EventBatch& batch : take.batches) {
      CHECK(batch.kind() == EventKind::plain);
      CHECK(batch.may_have(HeaderRef("n")));  // the format's header, not one the interceptors touch
      for (const EventRecord& e : batch) {
        std::string line(batch.body(e));
        for (const char* name : {"port", "clientIP", "clientHostname", "n", "at"})
          line += " " + std::string(batch.header(e, HeaderRef(name), scratch).value_or("-"));
        out.push_back(line);
      }
    }
    channels[c]->commit(take);
    return out;
  }
};

}  // namespace

TEST_CASE("an event is made, stamped with its origin, intercepted, routed, and put at batch size",
          "[pipeline][event_maker]") {
  MakerRig rig(3);
  pipeline::MadeTally tally;
  const pipeline::MessageOrigin origin{5140, 0, "10.0.0.1web01", 8};
  rig.maker->begin_read();
  CHECK(rig.maker->make("ev0", {}, origin, tally));
  CHECK(rig.maker->make("ev1", {}, origin, tally));
  CHECK_FALSE(rig.maker->full());
  CHECK(rig.maker->make("bad2", {}, {5141, 1, "", 0}, tally));
  CHECK(rig.maker->full());
  CHECK(tally.invalid == 1);
  CHECK(rig.maker->flush());
  CHECK(rig.maker->empty());
  CHECK(rig.held(0) ==
        std::vector<std::string>{"ev0 5140 10.0.0.1 web01 1 1700000000001", "bad2 5141 - - 3 1700000000001"});
  CHECK(rig.held(1) == std::vector<std::string>{"ev1 5140 10.0.0.1 web01 2 1700000000001"});
}

TEST_CASE("an event the interceptors filter out is counted and not in the batch", "[pipeline][event_maker]") {
  MakerRig rig(10);
  pipeline::MadeTally tally;
  rig.maker->begin_read();
  rig.maker->begin_read();  // the second read's time stamps what follows
  CHECK_FALSE(rig.maker->make("drop me", {}, {5140, 0, "", 0}, tally));
  CHECK(tally.filtered == 1);
  CHECK(rig.maker->empty());
  CHECK(rig.maker->make("keep", {}, {5140, 0, "", 0}, tally));
  CHECK(rig.maker->batch().size() == 1);
  CHECK(rig.maker->flush());
  CHECK(rig.maker->flush());  // nothing left: nothing put
  CHECK(rig.held(0) == std::vector<std::string>{"keep 5140 - - 2 1700000000002"});
  CHECK(rig.held(1).empty());
}
