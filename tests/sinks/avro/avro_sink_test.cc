// type = avro in-process: Sluice's Avro sink sending to Sluice's Avro source (and to sockets that
// refuse, stay silent or speak TLS), each take committed only once the collector answered OK.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <set>
#include <thread>

#include "sinks/avro/avro_sink.h"
#include "sources/syslog/syslog_parser.h"
#include "tests/support/avro_source.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/test_certificates.h"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

using Properties = std::map<std::string, std::string>;

// The sink under test on its own channel, sending to 127.0.0.1:`port`.
struct AvroSinkUnderTest {
  MemoryChannel channel{"in", MemoryChannelConfig{100000, 1000, {}, 20}};
  std::unique_ptr<Sink> sink;

  AvroSinkUnderTest(uint16_t port, Properties properties = {}) {
    properties.emplace("hostname", "127.0.0.1");
    properties.emplace("port", std::to_string(port));
    SharedState shared;
    BuildContext context{shared};
    sink =
        avro::kAvroSinkSpec.make_sink(test::component(config::Kind::sink, "k", "avro", properties), channel, context);
  }
  void put_lines(int first, int count) {
    EventBatchBuilder builder;
    for (int i = first; i < first + count; ++i) {
      const std::string line = "<13>Dec  4 05:00:00 web01 app: event " + std::to_string(i);
      syslog::parse_syslog(line, syslog::ParseClock::now(), builder.append(line));
    }
    EventBatch batch = builder.seal();
    REQUIRE(channel.put(batch, Clock::now() + 5s));
  }
  const avro::AvroSink& avro() const { return static_cast<const avro::AvroSink&>(*sink); }
};

// What a collector's sink does: takes and commits what arrives, recording "body host=... Severity=...".
class Drain {
 public:
  explicit Drain(Channel& channel)
      : thread_([this, &channel] {
          while (!stop_.load()) {
            const Take take = channel.take(100000, Clock::now() + 50ms);  // waits for events, as a sink's take
            std::lock_guard lock(mutex_);
            for (const EventBatch& b : take.batches)
              for (const EventRecord& e : b) {
                char scratch[24];
                events_.push_back(std::string(b.body(e)) + " host=" +
                                  std::string(b.header(e, HeaderRef("host"), scratch).value_or("-")) + " Severity=" +
                                  std::string(b.header(e, HeaderRef("Severity"), scratch).value_or("-")));
              }
            if (!take.empty()) channel.commit(take);
          }
        }) {}
  ~Drain() {
    stop_.store(true);
    thread_.join();
  }
  std::vector<std::string> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  size_t size() const { return events().size(); }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> events_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A port that accepts and never answers.
struct SilentCollector {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  uint16_t port = 0;
  SilentCollector() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 8) == 0);
    socklen_t length = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length);
    port = ntohs(a.sin_port);
  }
  ~SilentCollector() { ::close(fd); }
};

}  // namespace

TEST_CASE("the Avro sink delivers each take in one call and commits it once the collector answers OK", "[avro][sink]") {
  test::AvroSource collector;
  Drain drain(collector.channel);
  AvroSinkUnderTest t(collector.port(), {{"batch-size", "100"}});
  t.put_lines(0, 250);
  t.sink->start();
  REQUIRE(test::eventually([&] { return drain.size() == 250; }, 20s));
  REQUIRE(test::eventually([&] { return t.channel.counters().events_held == 0; }, 10s));
  const std::vector<std::string> events = drain.events();
  // Flume's syslog event: the message after the host is the body, the fields are headers.
  CHECK(events.front() == "app: event 0 host=web01 Severity=5");
  CHECK(events.back() == "app: event 249 host=web01 Severity=5");
  t.sink->stop(Clock::now() + 5s);
  const SinkCounters c = t.sink->counters();
  CHECK(c.events_sent == 250);
  CHECK(c.batches == 3);  // 100, 100, 50
  CHECK(c.events_rolled_back == 0);
  CHECK(t.avro().connections_made() == 1);  // one connection, kept
}

TEST_CASE("with no collector the Avro sink keeps its events in the channel, and delivers them once one listens",
          "[avro][sink]") {
  const uint16_t port = test::free_ports(1)[0];
  AvroSinkUnderTest t(port, {{"connect-timeout", "1000"}});
  t.put_lines(0, 10);
  t.sink->start();
  REQUIRE(test::eventually([&] { return t.sink->counters().events_rolled_back >= 10; }, 10s));
  CHECK(t.channel.counters().events_held == 10);
  CHECK(t.sink->counters().events_possibly_duplicated == 0);  // nothing was sent
  test::AvroSource collector(Properties{{"port", std::to_string(port)}});
  Drain drain(collector.channel);
  REQUIRE(test::eventually([&] { return drain.size() == 10; }, 20s));  // after its backoff
  t.sink->stop(Clock::now() + 5s);
  CHECK(t.channel.counters().events_held == 0);
  CHECK(drain.size() == 10);
}

TEST_CASE("a collector that does not answer in request-timeout: the take goes back, counted as possibly duplicated",
          "[avro][sink]") {
  SilentCollector silent;
  AvroSinkUnderTest t(silent.port, {{"request-timeout", "300"}});
  t.put_lines(0, 5);
  t.sink->start();
  REQUIRE(test::eventually([&] { return t.sink->counters().events_possibly_duplicated >= 5; }, 10s));
  t.sink->stop(Clock::now() + 2s);
  CHECK(t.channel.counters().events_held == 5);
  CHECK(t.sink->counters().events_sent == 0);
}

TEST_CASE("a stopping Avro sink ends a call the collector does not answer by its deadline", "[avro][sink]") {
  SilentCollector silent;
  AvroSinkUnderTest t(silent.port);  // request-timeout 20 s
  t.put_lines(0, 5);
  t.sink->start();
  REQUIRE(test::eventually([&] { return t.sink->counters().events_taken == 5; }, 10s));
  const auto stopping = Clock::now();
  t.sink->stop(stopping + 500ms);
  CHECK(Clock::now() - stopping < 10s);          // the deadline, not request-timeout's 20 s
  CHECK(t.channel.counters().events_held == 5);  // back in the channel
}

TEST_CASE("the Avro sink and source speak deflate, and TLS with the collector's CA", "[avro][sink]") {
  SECTION("deflate") {
    test::AvroSource collector(Properties{{"compression-type", "deflate"}});
    Drain drain(collector.channel);
    AvroSinkUnderTest t(collector.port(), {{"compression-type", "deflate"}, {"compression-level", "9"}});
    t.put_lines(0, 300);
    t.sink->start();
    REQUIRE(test::eventually([&] { return drain.size() == 300; }, 20s));
    t.sink->stop(Clock::now() + 5s);
    CHECK(t.sink->counters().events_sent == 300);
  }
  test::TempDir dir;
  const test::CertificateFiles certs = test::make_certificates(dir.path());
  test::AvroSource collector(
      Properties{{"ssl", "true"}, {"ssl.certificate", certs.server_cert}, {"ssl.key", certs.server_key}});
  Drain drain(collector.channel);
  SECTION("TLS, trusting the CA in a PEM file or a PKCS12 truststore") {
    const bool pem = GENERATE(true, false);
    AvroSinkUnderTest t(
        collector.port(),
        pem ? Properties{{"ssl", "true"}, {"ssl.ca", certs.ca}}
            : Properties{{"ssl", "true"}, {"truststore", certs.keystore}, {"truststore-password", "secret"}});
    t.put_lines(0, 20);
    t.sink->start();
    REQUIRE(test::eventually([&] { return t.sink->counters().events_sent == 20; }, 20s));
    t.sink->stop(Clock::now() + 5s);
  }
  SECTION("TLS with a certificate its CA did not sign: nothing is sent, the events stay") {
    test::TempDir other;
    const test::CertificateFiles strangers = test::make_certificates(other.path());
    AvroSinkUnderTest t(collector.port(), {{"ssl", "true"}, {"ssl.ca", strangers.ca}});
    t.put_lines(0, 20);
    t.sink->start();
    REQUIRE(test::eventually([&] { return t.sink->counters().events_rolled_back >= 20; }, 20s));
    t.sink->stop(Clock::now() + 2s);
    CHECK(t.channel.counters().events_held == 20);
    CHECK(t.sink->counters().events_sent == 0);
  }
}

TEST_CASE("the Avro sink's properties are checked together", "[avro][sink]") {
  const auto build = [](Properties p) {
    MemoryChannel channel{"in", MemoryChannelConfig{1000, 100, {}, 20}};
    SharedState shared;
    BuildContext context{shared};
    return avro::kAvroSinkSpec.make_sink(test::component(config::Kind::sink, "k", "avro", p), channel, context);
  };
  CHECK_THROWS_WITH(build({{"port", "4141"}}), Catch::Contains("hostname"));
  CHECK_THROWS_WITH(build({{"hostname", "127.0.0.1"}}), Catch::Contains("port"));
  CHECK_THROWS_WITH(build({{"hostname", "h"}, {"port", "1"}, {"truststore", "/x"}}), Catch::Contains("ssl"));
  CHECK_THROWS_WITH(build({{"hostname", "h"}, {"port", "1"}, {"ssl", "true"}, {"compression-type", "deflate"}}),
                    Catch::Contains("compression-type"));
  CHECK_THROWS_WITH(build({{"hostname", "h"}, {"port", "1"}, {"batch-size", "101"}}),
                    Catch::Contains("transactionCapacity"));
  CHECK_THROWS_WITH(build({{"hostname", "h"}, {"port", "1"}, {"ssl", "true"}, {"truststore", "/nonexistent"}}),
                    Catch::Contains("truststore"));
  CHECK_NOTHROW(build({{"hostname", "h"}, {"port", "1"}, {"maxIoWorkers", "8"}, {"request-timeout", "500"}}));
}

TEST_CASE("a collector whose channel stays full answers FAILED: the sink rolls back and delivers once there is room",
          "[avro][sink]") {
  test::AvroSource collector(Properties{{"channelFullTimeout", "200"}, {"batchSize", "10"}}, 30);
  {  // the collector's channel full before the sink sends
    EventBatchBuilder builder;
    for (int i = 0; i < 30; ++i) builder.append("earlier " + std::to_string(i));
    EventBatch earlier = builder.seal();
    REQUIRE(collector.channel.put(earlier, Clock::now() + 5s));
  }
  AvroSinkUnderTest t(collector.port(), {{"batch-size", "20"}});
  t.put_lines(0, 100);
  t.sink->start();
  // Each call waits 200 ms for room and is answered FAILED.
  REQUIRE(test::eventually([&] { return t.avro().calls(avro::CallOutcome::refused) >= 2; }, 20s));
  CHECK(collector.channel.counters().events_held == 30);
  CHECK(t.sink->counters().events_possibly_duplicated == 0);  // FAILED: not held, no doubt
  const SourceCounters refused = collector.source->counters();
  CHECK(refused.events_refused >= 20);
  Drain drain(collector.channel);
  REQUIRE(test::eventually([&] { return t.channel.counters().events_held == 0; }, 30s));
  t.sink->stop(Clock::now() + 5s);
  // Every event at least once; those of a batch that was partly in the channel when its call
  // failed, twice (a channel that stays full takes part of a batch: counted above).
  std::set<std::string> distinct;
  for (const std::string& e : drain.events())
    if (!e.starts_with("earlier")) distinct.insert(e);
  CHECK(distinct.size() == 100);
}
