#include <catch2/catch.hpp>

#include <linux/sockios.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include "loadgen/event_template.h"
#include "loadgen/receiver.h"
#include "loadgen/sender.h"
#include "loadgen/tls_client.h"
#include "loadgen/verifier.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/test_certificates.h"
#include "tests/support/test_thread.h"

using namespace sluice::loadgen;
using namespace std::chrono_literals;

namespace {

std::string one_event(uint32_t conn, uint64_t seq) {
  EventWriter w(EventFormat{}, conn, seq);
  std::string out;
  w.write(out, 1);
  return out;
}

// A listener on 127.0.0.1 whose connections get a small receive buffer; its port in `port`.
int small_listener(int receive_buffer, uint16_t& port) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ::setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 4) != 0)
    throw std::runtime_error("cannot listen on 127.0.0.1");
  socklen_t length = sizeof addr;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &length);
  port = ntohs(addr.sin_port);
  return listener;
}

SendResult send_to(const CountingReceiver& receiver, double rate, std::chrono::milliseconds duration,
                   int connections = 2) {
  SendOptions options;
  options.targets = {{"127.0.0.1", receiver.port()}};
  options.connections = connections;
  options.rate = rate;
  options.duration = duration;
  options.progress_interval = 0ms;
  return send_events(options);
}

}  // namespace

TEST_CASE("every template writes events of exactly --size bytes that carry their connection and sequence",
          "[loadgen]") {
  for (const char* name : {"apache", "rfc5424"}) {
    EventFormat format;
    format.template_name = name;
    for (size_t size : {minimum_event_size(format), size_t{120}, size_t{121}, size_t{500}}) {
      format.size = size;
      INFO(name << " size " << size);
      EventWriter writer(format, 42, 998);
      std::string out;
      writer.write(out, 5);
      REQUIRE(out.size() == 5 * size);
      for (size_t i = 0; i < 5; ++i) {
        const std::string_view event = std::string_view(out).substr(i * size, size);
        CHECK(event.find('\n') == size - 1);
        const auto id = parse_event_id(event);
        REQUIRE(id);
        CHECK(id->connection == 42);
        CHECK(id->sequence == 998 + i);
      }
    }
    format.size = minimum_event_size(format) - 1;
    CHECK_THROWS_AS(EventWriter(format, 0), std::invalid_argument);
  }
}

TEST_CASE("octet-counting framing prefixes each message with its length instead of a newline", "[loadgen]") {
  EventFormat format;
  format.framing = Framing::octet_counting;
  EventWriter writer(format, 1, 9);
  std::string out;
  writer.write(out, 2);
  REQUIRE(out.rfind("119 <134>", 0) == 0);  // --size 120 = a 119-byte message plus its LF
  REQUIRE(out.size() == 2 * (4 + 119));
  CHECK(out.find('\n') == std::string::npos);
  CHECK(parse_event_id(std::string_view(out).substr(4 + 119))->sequence == 10);
}

TEST_CASE("a datagram is the message alone, exactly --size bytes, and its end is reported", "[loadgen]") {
  EventFormat format;
  format.framing = Framing::datagram;
  CHECK(minimum_event_size(format) + 1 == minimum_event_size(EventFormat{}));  // no LF to make room for
  EventWriter writer(format, 2, 41);
  std::string out;
  std::vector<size_t> ends;
  writer.write(out, 3, &ends);
  CHECK(ends == std::vector<size_t>{120, 240, 360});
  CHECK(out.size() == 360);
  CHECK(out.find('\n') == std::string::npos);
  CHECK(parse_event_id(std::string_view(out).substr(240, 120))->sequence == 43);
}

TEST_CASE("replayed lines are sent in turn with the id appended", "[loadgen]") {
  EventFormat format;
  format.template_name = "file";
  format.replay_lines = {"<13>first line", "<14>second"};
  EventWriter writer(format, 3, 0);
  std::string out;
  writer.write(out, 3);
  CHECK(out ==
        "<13>first line /lg/00003/0000000000\n<14>second /lg/00003/0000000001\n"
        "<13>first line /lg/00003/0000000002\n");
}

TEST_CASE("the verifier detects loss and duplication and reordering", "[loadgen][verifier]") {
  Verifier v(Expected{{0, {10, {}}}, {1, {3, {}}}});
  for (uint64_t s = 0; s < 10; ++s)
    if (s != 4 && s != 5) v.add(0, -1, one_event(0, s));
  v.add(1, -1, one_event(1, 0));
  v.add(1, -1, one_event(1, 2));
  v.add(1, -1, one_event(1, 1));  // after 2 on the same partition: reordered
  v.add(1, -1, one_event(1, 1));  // twice: duplicated
  v.add(2, -1, "not ours");
  const Verdict verdict = v.finish();
  CHECK(verdict.missing == 2);
  CHECK(verdict.connections.at(0).missing_ranges == std::vector<std::pair<uint64_t, uint64_t>>{{4, 5}});
  CHECK(verdict.duplicates == 1);
  CHECK(verdict.reordered == 2);
  CHECK(verdict.unrecognised == 1);
  CHECK_FALSE(verdict.ok());

  Verifier clean(Expected{{7, {3, {}}}});
  for (uint64_t s = 0; s < 3; ++s) clean.add(0, -1, one_event(7, s));
  CHECK(clean.finish().ok());

  Verifier tail_lost(Expected{{7, {3, {}}}});
  tail_lost.add(0, -1, one_event(7, 0));
  CHECK(tail_lost.finish().missing == 2);  // the sender's summary makes a lost tail visible

  Verifier declared(Expected{{7, {4, {{1, 2}}}}});  // the sender saw the write of 1-2 fail
  declared.add(0, -1, one_event(7, 0));
  declared.add(0, -1, one_event(7, 3));
  const Verdict d = declared.finish();
  CHECK(d.missing == 0);
  CHECK(d.possibly_lost == 2);
  CHECK(d.ok());
}

TEST_CASE(
    "the verifier fails events the sender never sent: past a connection's count, or on a connection its summary does "
    "not list",
    "[loadgen][verifier]") {
  // One event lost and one the sender never sent: the totals match, the verdict must not.
  Verifier beyond(Expected{{7, {4, {}}}});
  for (uint64_t s : {0, 1, 2, 4}) beyond.add(0, -1, one_event(7, s));
  const Verdict b = beyond.finish();
  CHECK(b.unique == 4);
  CHECK(b.missing == 1);
  CHECK(b.beyond == 1);
  CHECK(b.connections.at(7).beyond == 1);
  CHECK_FALSE(b.ok());
  CHECK_THAT(b.report(), Catch::Contains("connection 7: expected 4, unique 4, duplicates 0, missing 1, beyond 1") &&
                             Catch::Contains("1 beyond the count") && Catch::Contains("FAILED"));

  // Beyond alone, nothing missing.
  Verifier past(Expected{{7, {2, {}}}});
  for (uint64_t s : {0, 1, 2}) past.add(0, -1, one_event(7, s));
  CHECK(past.finish().beyond == 1);
  CHECK(past.finish().missing == 0);
  CHECK_FALSE(past.finish().ok());

  // Every listed event once, and more on a connection the summary does not list.
  Verifier unknown(Expected{{7, {2, {}}}});
  for (uint64_t s : {0, 1}) unknown.add(0, -1, one_event(7, s));
  for (uint64_t s : {0, 1, 2}) unknown.add(0, -1, one_event(8, s));
  const Verdict u = unknown.finish();
  CHECK(u.missing == 0);
  CHECK(u.duplicates == 0);
  CHECK(u.unknown == 3);
  CHECK(u.connections.at(8).unknown);
  CHECK_FALSE(u.ok());
  CHECK_THAT(u.report(), Catch::Contains("(not in the sender's summary)") &&
                             Catch::Contains("3 on connection(s) it does not list"));

  // Without a summary nothing is known to be unsent: each connection counts up to its highest.
  Verifier no_summary;
  for (uint64_t s : {0, 1}) no_summary.add(0, -1, one_event(8, s));
  CHECK(no_summary.finish().ok());

  // Declared lost and missing is not beyond (it once underflowed to 2^64 - 2).
  Verifier declared(Expected{{7, {4, {{1, 2}}}}});
  for (uint64_t s : {0, 3}) declared.add(0, -1, one_event(7, s));
  CHECK(declared.finish().beyond == 0);
  CHECK(declared.finish().ok());
}

TEST_CASE("several sends' summaries are verified together, each on connection ids of its own", "[loadgen][verifier]") {
  sluice::test::TempDir dir;
  SendResult first, second;
  ConnectionResult c;
  for (uint32_t id : {0u, 1u}) {
    c.id = id;
    c.sent = 10;
    first.connections.push_back(c);
  }
  for (uint32_t id : {2u, 3u}) {
    c.id = id;
    c.sent = 20;
    second.connections.push_back(c);
  }
  std::ofstream(dir.file("first.json")) << first.to_json();
  std::ofstream(dir.file("second.json")) << second.to_json();
  const SenderSummary both = read_sender_summaries({dir.file("first.json"), dir.file("second.json")});
  REQUIRE(both.connections.size() == 4);
  CHECK(both.connections.at(1).sent == 10);
  CHECK(both.connections.at(3).sent == 20);
  // The same ids twice: two sends numbered alike, which the verifier cannot tell apart.
  CHECK_THROWS_WITH(read_sender_summaries({dir.file("first.json"), dir.file("first.json")}),
                    Catch::Contains("connection 0 is in an earlier summary too"));
}

TEST_CASE("over UDP a missing datagram is fine only as far as a counted drop accounts for it", "[loadgen][verifier]") {
  Verifier v(Expected{{0, {100, {}}}});
  for (uint64_t s = 0; s < 100; ++s)
    if (s % 10) v.add(0, -1, one_event(0, s));  // 10 missing
  Verdict verdict = v.finish();
  verdict.datagrams = true;
  verdict.counted_drops = 6;  // the agent's
  verdict.backlog_drops = 4;  // the machine's, before any socket
  CHECK(verdict.missing == 10);
  CHECK(verdict.missing_unaccounted() == 0);
  CHECK(verdict.ok());
  CHECK_THAT(verdict.report(), Catch::Contains("VERIFIED: every datagram stored once or counted as dropped"));
  verdict.backlog_drops = 1;
  CHECK(verdict.missing_unaccounted() == 3);
  CHECK_FALSE(verdict.ok());
  CHECK_THAT(verdict.report(), Catch::Contains("not accounted for 3"));
  verdict.datagrams = false;  // over TCP a drop count excuses nothing
  verdict.counted_drops = 100;
  CHECK_FALSE(verdict.ok());
}

TEST_CASE("the sender's summary round-trips through the verifier's reader", "[loadgen][verifier]") {
  sluice::test::TempDir dir;
  SendResult result;
  ConnectionResult c;
  c.id = 4;
  c.sent = 1000;
  c.lost_ranges = {{10, 20}, {500, 755}};
  result.connections = {c};
  std::ofstream(dir.file("sent.json")) << result.to_json();
  const SenderSummary summary = read_sender_summary(dir.file("sent.json"));
  const Expected& expected = summary.connections;
  REQUIRE(expected.count(4));
  CHECK(expected.at(4).sent == 1000);
  CHECK(expected.at(4).lost_ranges == c.lost_ranges);
  CHECK_FALSE(summary.udp);

  result.udp = true;
  result.backlog_drops = 77;
  std::ofstream(dir.file("udp.json")) << result.to_json();
  const SenderSummary udp = read_sender_summary(dir.file("udp.json"));
  CHECK(udp.udp);
  CHECK(udp.backlog_drops == 77);
  result.udp_gso = true;  // a dropped packet may have held 64 datagrams
  std::ofstream(dir.file("gso.json")) << result.to_json();
  CHECK(read_sender_summary(dir.file("gso.json")).backlog_drops == 77 * 64);
  CHECK(udp.connections.at(4).sent == 1000);
}

TEST_CASE("over UDP each event is one datagram of --size bytes from a socket of its own", "[loadgen][udp]") {
  const int receiver = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(receiver >= 0);
  const int big = 8 << 20;
  if (::setsockopt(receiver, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0)  // without CAP_NET_ADMIN
    ::setsockopt(receiver, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  timeval wait{0, 200'000};
  ::setsockopt(receiver, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(receiver, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t length = sizeof addr;
  ::getsockname(receiver, reinterpret_cast<sockaddr*>(&addr), &length);
  // Read while they are sent, so that a small socket buffer does not drop them (no assertion in
  // the thread: Catch2 is not thread-safe).
  std::atomic<bool> sending_done{false};
  std::map<uint32_t, uint64_t> per_socket;
  uint64_t received = 0;
  std::vector<ssize_t> wrong_sizes;
  sluice::test::TestThread reader([&] {
    char datagram[2048];
    while (true) {
      const ssize_t n = ::recv(receiver, datagram, sizeof datagram, 0);
      if (n < 0) {
        if (sending_done) break;  // quiet for 200 ms after the last send
        continue;
      }
      ++received;
      if (n != 120) wrong_sizes.push_back(n);
      if (const auto id = parse_event_id(std::string_view(datagram, static_cast<size_t>(n))))
        ++per_socket[id->connection];
    }
  });
  SendOptions options;
  options.targets = {{"127.0.0.1", ntohs(addr.sin_port)}};
  options.connections = 3;
  options.udp = true;
  options.format.framing = Framing::datagram;
  options.count = 3000;
  options.rate = 30000;
  options.duration = 10s;
  options.progress_interval = 0ms;
  const SendResult result = send_events(options);
  sending_done = true;
  reader.join();
  ::close(receiver);
  CHECK(result.sent == 3000);
  CHECK(result.possibly_lost == 0);
  CHECK_THAT(result.to_json(), Catch::Contains("\"udp\":true"));
  CHECK(wrong_sizes.empty());
  // Loopback's backlog may drop (a packet of up to 64 datagrams each): the summary says how many.
  CHECK(received + result.backlog_drops * 64 >= 3000);
  CHECK(per_socket.size() == 3);
}

// How closely the rate is kept is a timing measurement: bench/loadgen_rate.sh measures it.
TEST_CASE("a rate-limited send stops at its duration and everything it counts as sent arrives", "[loadgen][rate]") {
  CountingReceiver receiver;
  const SendResult result = send_to(receiver, 1000, 1000ms);
  CHECK(result.sent > 0);
  // The pacer's promise, whatever the machine's speed: it writes only before its end and never
  // ahead of the rate (chunks round down), so at most rate x duration.
  CHECK(result.sent <= 1000);
  REQUIRE(sluice::test::eventually([&] { return receiver.events() >= result.sent; }, 10s));
  CHECK(receiver.events() == result.sent);
  CHECK(receiver.bytes() == result.sent * 120);
}

TEST_CASE("connections that the receiver drops are reconnected with backoff", "[loadgen]") {
  CountingReceiver receiver;
  sluice::test::TestThread dropper([&] {
    // Once both connections are up and sending (no assertion here: Catch2 is not thread-safe).
    sluice::test::eventually([&] { return receiver.connections_accepted() >= 2 && receiver.events() > 0; }, 10s);
    receiver.drop_connections();
  });
  const SendResult result = send_to(receiver, 20000, 2500ms);
  dropper.join();
  CHECK(result.ok());
  CHECK(result.reconnects >= 1);
  CHECK(receiver.connections_accepted() >= 3);
  CHECK(result.sent - result.possibly_lost >= 40000);  // sending went on after the drop
}

TEST_CASE("a receiver that half-closes (an agent shutting down) is left cleanly and nothing is lost", "[loadgen]") {
  CountingReceiver receiver;
  sluice::test::TestThread closer([&] {
    sluice::test::eventually([&] { return receiver.connections_accepted() >= 2 && receiver.events() > 0; }, 10s);
    receiver.half_close_connections();
  });
  const SendResult result = send_to(receiver, 20000, 2000ms);
  closer.join();
  CHECK(result.ok());
  uint64_t closed_by_receiver = 0;
  for (const ConnectionResult& c : result.connections) closed_by_receiver += c.closed_by_receiver;
  CHECK(closed_by_receiver == 2);  // both connections closed on the FIN and came back
  CHECK(result.possibly_lost == 0);
  CHECK(sluice::test::eventually([&] { return receiver.events() == result.sent; }, 5s));
}

TEST_CASE("events a receiver never acknowledged before it reset the connection are declared possibly lost",
          "[loadgen]") {
  // A receiver that reads a little, stops reading (its window closes, the sender's queue fills
  // with bytes it has not acknowledged), then resets the connection. What it acknowledged but
  // never read (its receive queue) is lost after reaching it: no sender can know. Everything
  // else that is missing must be among what the sender declared possibly lost.
  uint16_t port = 0;
  const int listener = small_listener(64 * 1024, port);
  std::set<uint64_t> received;
  uint64_t acknowledged_unread = 0;
  sluice::test::TestThread receiver([&] {
    const auto read_lines = [&](int fd, size_t at_most) {
      std::string pending;
      char buffer[4096];
      size_t total = 0;
      while (total < at_most) {
        const ssize_t n = ::recv(fd, buffer, std::min(sizeof buffer, at_most - total), 0);
        if (n <= 0) break;
        total += static_cast<size_t>(n);
        pending.append(buffer, static_cast<size_t>(n));
        for (size_t end; (end = pending.find('\n')) != std::string::npos; pending.erase(0, end + 1))
          if (const auto id = parse_event_id(std::string_view(pending).substr(0, end))) received.insert(id->sequence);
      }
    };
    const int first = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    read_lines(first, 120 * 100);  // 100 whole events, then no more reading
    // Until the window is shut: the receive queue stops growing (the sender's queue holds the rest).
    int queued = -1, before = -2;
    sluice::test::eventually(
        [&] {
          before = queued;
          ::ioctl(first, SIOCINQ, &queued);
          return queued > 0 && queued == before;
        },
        10s, 100ms);
    acknowledged_unread = static_cast<uint64_t>(queued);
    const linger reset{1, 0};
    ::setsockopt(first, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(first);
    const int second = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);  // the sender comes back
    read_lines(second, SIZE_MAX);
    ::close(second);
  });
  SendOptions options;
  options.targets = {{"127.0.0.1", port}};
  options.connections = 1;
  options.count = 100'000;
  options.duration = 20s;
  options.progress_interval = 0ms;
  const SendResult result = send_events(options);
  receiver.join();
  ::close(listener);
  REQUIRE(result.connections.size() == 1);
  const ConnectionResult& c = result.connections[0];
  INFO("sent " << c.sent << ", received " << received.size() << ", declared " << c.possibly_lost
               << ", acknowledged but unread " << acknowledged_unread);
  CHECK(c.reconnects == 1);
  CHECK(c.possibly_lost > 256);  // more than the one write that failed: its queue too
  uint64_t undeclared = 0;
  for (uint64_t seq = 0; seq < c.sent; ++seq) {
    if (received.count(seq)) continue;
    const bool declared = std::any_of(c.lost_ranges.begin(), c.lost_ranges.end(),
                                      [&](const auto& r) { return seq >= r.first && seq <= r.second; });
    undeclared += !declared;
  }
  CHECK(undeclared <= acknowledged_unread / 120 + 1);
}

namespace {

// Runs send_events in a thread of its own and waits for it (20 s at most): a sender that never
// returns fails the test instead of hanging it, once `unblock` (closing the receiver) lets it go.
struct BoundedSend {
  SendResult result;
  bool ended = false;
  std::chrono::steady_clock::duration elapsed{};
  BoundedSend(const SendOptions& options, const std::function<void()>& unblock) {
    std::atomic<bool> done{false};
    const auto start = std::chrono::steady_clock::now();
    sluice::test::TestThread sender([&] {
      result = send_events(options);
      done = true;
    });
    ended = sluice::test::eventually([&] { return done.load(); }, 20s);
    elapsed = std::chrono::steady_clock::now() - start;
    unblock();
    sender.join();
  }
};

// Runs a write in a thread of its own and waits for it (20 s at most): a write that never returns
// fails the test instead of hanging it, once the reading end is shut down (the write then fails).
struct BoundedWrite {
  bool written = false, returned = false;
  BoundedWrite(const std::function<bool()>& write, int reading_end) {
    std::atomic<bool> done{false};
    sluice::test::TestThread writer([&] {
      written = write();
      done = true;
    });
    returned = sluice::test::eventually([&] { return done.load(); }, 20s);
    if (!returned) ::shutdown(reading_end, SHUT_RDWR);
    writer.join();
  }
};

}  // namespace

TEST_CASE("a receiver that takes nothing holds a write only until the run's end and --write-timeout", "[loadgen]") {
  // A listener that never accepts: the kernel completes the handshakes and buffers what it can,
  // then the sender's writes wait. They must give up at their deadline, not hang the run, and
  // every connection's events that the receiver never acknowledged count as possibly lost, the
  // one whose write was given up and the other, closed at the end, alike.
  uint16_t port = 0;
  const int listener = small_listener(16 * 1024, port);
  SendOptions options;
  options.targets = {{"127.0.0.1", port}};
  options.connections = 2;
  options.threads = 1;
  // Long enough that the receivers' kernels have taken all they will (after the queues fill, a
  // receive queue compacted in the background lets a little more in, for a second or two).
  options.duration = 3s;
  options.write_timeout = 1s;
  options.progress_interval = 0ms;
  const BoundedSend run(options, [&] { ::close(listener); });  // resets what still waits: the failure case
  REQUIRE(run.ended);
  CHECK(run.elapsed >= options.duration + options.write_timeout);  // it waited out the grace first
  REQUIRE(run.result.connections.size() == 2);
  const auto given_up =
      std::find_if(run.result.connections.begin(), run.result.connections.end(),
                   [](const ConnectionResult& c) { return c.error.find("deadline") != std::string::npos; });
  REQUIRE(given_up != run.result.connections.end());
  CHECK(given_up->possibly_lost > 256);  // the write given up and what came before it
  for (const ConnectionResult& c : run.result.connections) {
    INFO("connection " << c.id << ": sent " << c.sent << ", possibly lost " << c.possibly_lost
                       << ", error: " << c.error);
    CHECK(c.possibly_lost <= c.sent);
    // What the receiver's kernel took (its 16 KiB buffer and the window: a few hundred events)
    // is all that is not declared; it never reached a reader, but it did reach the receiver.
    CHECK(c.sent - c.possibly_lost < 2000);
  }
  CHECK_FALSE(run.result.ok());  // a connection ended down: the run did not succeed
}

TEST_CASE("a write waits for a receiver that takes nothing only until its deadline, plain and over TLS", "[loadgen]") {
  // A stream socket pair: what one end writes waits in the pair's buffers until the other reads,
  // and nothing drains it otherwise, so that the write's wait is the test's, not the network's.
  int ends[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) == 0);
  const std::string data(8 << 20, 'x');  // more than the pair's buffers hold
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  SECTION("plain") {
    wake_blocked_writes(ends[0]);
    SECTION("given up at the deadline") {
      const BoundedWrite write([&] { return write_all(ends[0], data, start + 300ms, error); }, ends[1]);
      REQUIRE(write.returned);
      CHECK_FALSE(write.written);
      CHECK(std::chrono::steady_clock::now() - start >= 300ms);
      CHECK(error.find("deadline") != std::string::npos);
    }
    SECTION("a receiver that reads before the deadline gets everything") {
      size_t received = 0;
      sluice::test::TestThread reader([&] {
        char buffer[65536];
        for (ssize_t n; received < data.size() && (n = ::read(ends[1], buffer, sizeof buffer)) > 0;)
          received += static_cast<size_t>(n);
      });
      CHECK(write_all(ends[0], data, start + 30s, error));
      reader.join();
      CHECK(received == data.size());
    }
  }
  SECTION("over TLS: SSL_write, wanting to write, is tried again until the deadline") {
    sluice::test::TempDir dir;
    const sluice::test::CertificateFiles certs = sluice::test::make_certificates(dir.path());
    SSL_CTX* context = SSL_CTX_new(TLS_server_method());
    REQUIRE(SSL_CTX_use_certificate_file(context, certs.server_cert.c_str(), SSL_FILETYPE_PEM) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey_file(context, certs.server_key.c_str(), SSL_FILETYPE_PEM) == 1);
    std::atomic<bool> stop{false};
    sluice::test::TestThread receiver([&] {
      SSL* session = SSL_new(context);
      SSL_set_fd(session, ends[1]);
      if (SSL_accept(session) == 1) sluice::test::eventually([&] { return stop.load(); }, 30s);  // reads nothing
      SSL_free(session);
    });
    TlsClientOptions options;
    options.ca = certs.ca;
    const TlsClient client(options);
    SSL* session = client.connect(ends[0], error);
    if (session) {
      wake_blocked_writes(ends[0]);
      const auto since = std::chrono::steady_clock::now();
      const BoundedWrite write([&] { return write_all(session, data, since + 300ms, error); }, ends[1]);
      CHECK(write.returned);
      CHECK_FALSE(write.written);
      CHECK(std::chrono::steady_clock::now() - since >= 300ms);
      SSL_free(session);
    }
    stop = true;
    ::shutdown(ends[0], SHUT_RDWR);  // a handshake still waiting (the failure) ends
    receiver.join();
    SSL_CTX_free(context);
    REQUIRE(session != nullptr);
    CHECK(error.find("TLS write") != std::string::npos);
    CHECK(error.find("deadline") != std::string::npos);
  }
  ::close(ends[0]);
  ::close(ends[1]);
}

TEST_CASE("targets parse as host:port", "[loadgen]") {
  CHECK(parse_target("127.0.0.1:5140").port == 5140);
  CHECK(parse_target("[::1]:7000").host == "::1");
  CHECK_THROWS(parse_target("localhost"));
  CHECK_THROWS(parse_target("localhost:0"));
}

TEST_CASE("the --priorities option: the template's events take each PRI in turn, each of --size bytes", "[loadgen]") {
  sluice::loadgen::EventFormat format;
  format.priorities = {134, 3, 131};
  sluice::loadgen::EventWriter writer(format, 1);
  std::string out;
  std::vector<size_t> ends;
  format.framing = sluice::loadgen::Framing::lf;
  writer.write(out, 4, &ends);
  REQUIRE(ends.size() == 4);
  CHECK(out.substr(0, 5) == "<134>");
  CHECK(out.substr(ends[0], 3) == "<3>");
  CHECK(out.substr(ends[1], 5) == "<131>");
  CHECK(out.substr(ends[2], 5) == "<134>");
  CHECK(ends[0] == 120);
  CHECK(ends[1] - ends[0] == 120);
  CHECK(ends[2] - ends[1] == 120);
  CHECK(sluice::loadgen::parse_event_id(out.substr(ends[0], 120))->sequence == 1);
}
