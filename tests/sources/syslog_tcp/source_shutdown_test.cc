// The syslog TCP source at shutdown, in-process: what senders delivered is read, or counted;
// a frame cut off is kept as Incomplete; connections waiting to be handed over are drained.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <thread>

#include "channels/memory/memory_channel.h"
#include "sources/syslog_tcp/syslog_tcp_source.h"
#include "tests/support/component.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/socket_io.h"
#include "tests/support/test_thread.h"

using namespace sluice;
using namespace sluice::syslog_tcp;
using namespace std::chrono_literals;
using sluice::test::eventually;

namespace {

// True once the peer has half-closed (our FIN arrived): what rsyslog checks before a send.
bool peer_closed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

std::vector<std::string> drain_channel(Channel& channel) {
  std::vector<std::string> raw;
  for (Take t = channel.take(1'000'000, Clock::now()); !t.empty(); t = channel.take(1'000'000, Clock::now())) {
    for (const EventBatch& b : t.batches)
      for (const EventRecord& e : b) raw.emplace_back(b.raw(e));
    channel.commit(t);
  }
  return raw;
}

struct SourceUnderTest {
  MemoryChannel channel;
  config::ComponentConfig component;
  SyslogTcpSource source;
  SourceUnderTest(size_t capacity, std::map<std::string, std::string> properties)
      : channel("c", MemoryChannelConfig{capacity, capacity, {}, 20}),
        component(test::syslog_source_component(std::move(properties))),
        source(component, parse_syslog_tcp_config(component), {&channel}) {
    source.start();
  }
  uint16_t port() const { return source.listening_ports()[0]; }
};

}  // namespace

TEST_CASE("a sender that closes when it sees our FIN at shutdown loses nothing it wrote", "[source][shutdown]") {
  SourceUnderTest t(1'000'000, {});
  const int fd = test::connect_loopback(t.port());
  std::atomic<uint64_t> written{0};
  test::TestThread sender([&] {
    // Up to 200,000 events (the channel holds them all), checking for our FIN before each write.
    const auto give_up = Clock::now() + 20s;
    while (Clock::now() < give_up && !peer_closed(fd) && written < 200'000) {
      std::string chunk;
      for (int i = 0; i < 10; ++i) chunk += "<13>app: event " + std::to_string(written + i) + "\n";
      if (!test::send_all(fd, chunk)) break;
      written += 10;
    }
    eventually([&] { return peer_closed(fd); },
               std::chrono::duration_cast<std::chrono::milliseconds>(give_up - Clock::now()), 1ms);
    ::close(fd);  // as rsyslog does when it finds the connection closed
  });
  REQUIRE(eventually([&] { return t.source.tcp_counters().events_received > 10000; }, 20s));
  t.source.stop(Clock::now() + 10s);
  sender.join();
  const SyslogTcpCounters c = t.source.tcp_counters();
  const std::vector<std::string> events = drain_channel(t.channel);
  CHECK(events.size() == written.load());
  CHECK(c.events_received == written.load());
  CHECK(c.bytes_unread_at_shutdown == 0);
  CHECK(c.frames_cut == 0);
  CHECK(events.back() == "<13>app: event " + std::to_string(written.load() - 1));
}

TEST_CASE(
    "what a sender delivered but could not go into the channel by the deadline is counted, never dropped "
    "silently",
    "[source][shutdown]") {
  // A channel of 10 with nobody taking: the io thread blocks on its second batch, and what the
  // sender writes next waits in the kernel's buffer.
  SourceUnderTest t(10, {{"batchSize", "10"}});
  const int fd = test::connect_loopback(t.port());
  std::string first;
  for (int i = 0; i < 20; ++i) first += "<13>app: first " + std::to_string(i) + "\n";
  REQUIRE(test::send_all(fd, first));
  REQUIRE(eventually([&] { return t.channel.counters().put_blocked > 0ns; }, 10s));
  std::string later;
  for (int i = 0; i < 100; ++i) later += "<13>app: later " + std::to_string(i) + "\n";
  REQUIRE(test::send_all(fd, later));
  // Nobody takes from the channel: only the deadline ends the stop, and what it cut is counted.
  // The stop is waited for 5 s, ten times its deadline.
  auto stopped = std::async(std::launch::async, [&] { t.source.stop(Clock::now() + 500ms); });
  REQUIRE(stopped.wait_for(5s) == std::future_status::ready);
  const SyslogTcpCounters c = t.source.tcp_counters();
  const size_t in_channel = drain_channel(t.channel).size();
  CHECK(in_channel == 10);
  CHECK(c.events_dropped_at_shutdown >= 10);  // at least the batch that never found room
  // Every byte is in an event that reached the channel, in one counted as dropped, or counted
  // as unread in the socket.
  CHECK(c.bytes_received + c.bytes_unread_at_shutdown == first.size() + later.size());
  CHECK(in_channel + c.events_dropped_at_shutdown == c.events_received);
  ::close(fd);
}

TEST_CASE("a sender that pauses after our FIN before its last bytes and its close loses nothing",
          "[source][shutdown]") {
  // A sender does not see our FIN at once: it may be between two writes, its last segment may
  // be retransmitted, or it may have called close() with bytes still queued. A connection that
  // is merely quiet for a while is not closed: only its sender's FIN, or the grace's end, ends it.
  SourceUnderTest t(1000, {});
  const int fd = test::connect_loopback(t.port());
  REQUIRE(test::send_all(fd, "<13>app: before\n"));
  REQUIRE(eventually([&] { return t.source.tcp_counters().events_received == 1; }, 10s));
  // What the sender saw, asserted after the join (Catch2 is not thread-safe).
  bool saw_fin = false, sent_after_pause = false;
  test::TestThread sender([&] {
    saw_fin = eventually([&] { return peer_closed(fd); }, 10s);
    if (saw_fin) {
      // The scenario, not a synchronisation: a gap longer than any "quiet" rule would allow.
      std::this_thread::sleep_for(600ms);
      sent_after_pause = test::send_all(fd, "<13>app: after the pause\n");
    }
    ::close(fd);
  });
  t.source.stop(Clock::now() + 10s);
  sender.join();
  CHECK(saw_fin);
  CHECK(sent_after_pause);
  const SyslogTcpCounters c = t.source.tcp_counters();
  CHECK(drain_channel(t.channel) == std::vector<std::string>{"<13>app: before", "<13>app: after the pause"});
  CHECK(c.connections_cut_at_shutdown == 0);
  CHECK(c.bytes_unread_at_shutdown == 0);
}

TEST_CASE("a partial frame cut off at shutdown is kept as Incomplete and counted", "[source][shutdown]") {
  SourceUnderTest t(1000, {});
  const int fd = test::connect_loopback(t.port());
  const std::string bytes = "<13>app: whole\n<13>app: half a li";
  REQUIRE(test::send_all(fd, bytes));
  REQUIRE(eventually([&] { return t.source.tcp_counters().bytes_received == bytes.size(); }, 10s));
  t.source.stop(Clock::now() + 5s);  // the sender never finishes its line, nor closes
  const SyslogTcpCounters c = t.source.tcp_counters();
  CHECK(c.frames_cut == 1);
  CHECK(c.connections_cut_at_shutdown == 1);  // cut by the grace's end, not closed by its sender
  CHECK(c.events_truncated == 0);
  Take take = t.channel.take(10, Clock::now());
  REQUIRE(take.events == 2);
  std::vector<std::pair<std::string, EventStatus>> events;
  for (const EventBatch& b : take.batches)
    for (const EventRecord& e : b) events.emplace_back(b.raw(e), e.status);
  CHECK(events == std::vector<std::pair<std::string, EventStatus>>{{"<13>app: whole", EventStatus::ok},
                                                                   {"<13>app: half a li", EventStatus::incomplete}});
  ::close(fd);
}

TEST_CASE("a connection handed to a busy io thread just before the stop is drained, not closed unread",
          "[source][shutdown]") {
  // Two io threads; the acceptor (thread 0) deals connections 0, 1, 0, 1. Thread 1 is blocked
  // on a full channel when its second connection is handed to it.
  SourceUnderTest t(10, {{"batchSize", "10"}, {"numProcessors", "2"}});
  const int a = test::connect_loopback(t.port());  // thread 0
  const int b = test::connect_loopback(t.port());  // thread 1
  std::string twenty;
  for (int i = 0; i < 20; ++i) twenty += "<13>app: b " + std::to_string(i) + "\n";
  REQUIRE(test::send_all(b, twenty));
  REQUIRE(eventually([&] { return t.channel.counters().put_blocked > 0ns; }, 10s));
  const int c = test::connect_loopback(t.port());  // thread 0
  const int d = test::connect_loopback(t.port());  // thread 1, which is blocked: it waits in its hand-over queue
  REQUIRE(test::send_all(d, "<13>app: from d\n"));
  REQUIRE(eventually([&] { return t.source.tcp_counters().connections_accepted == 4; }, 10s));
  test::TestThread stopper([&] { t.source.stop(Clock::now() + 10s); });
  // Once the listeners are closed, make room: thread 1 goes on and finds d among its
  // connections to drain.
  REQUIRE(eventually(
      [&] {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(t.port());
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        const bool refused = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0;
        ::close(fd);
        return refused;
      },
      10s));
  std::vector<std::string> events;
  std::atomic<bool> stopped{false};
  test::TestThread consumer([&] {
    const auto give_up = Clock::now() + 60s;
    while (!stopped && Clock::now() < give_up) {
      auto more = drain_channel(t.channel);
      events.insert(events.end(), more.begin(), more.end());
      std::this_thread::sleep_for(5ms);
    }
  });
  stopper.join();
  stopped = true;
  consumer.join();
  auto rest = drain_channel(t.channel);
  events.insert(events.end(), rest.begin(), rest.end());
  CHECK(std::count(events.begin(), events.end(), "<13>app: from d") == 1);
  CHECK(events.size() == 21);
  CHECK(t.source.tcp_counters().bytes_unread_at_shutdown == 0);
  for (int fd : {a, b, c, d}) ::close(fd);
}
