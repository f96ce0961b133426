// A RELP session's replies: the open answered with our offers, each syslog message only once its
// ticket is done, in order, the close after every earlier reply.

#include <catch2/catch.hpp>

#include <vector>

#include "sources/relp/relp_session.h"

using namespace sluice::relp;
using sluice::net::AckQueue;
using sluice::net::AckWaker;

namespace {

struct Session : sluice::net::MessageSink {
  std::shared_ptr<AckWaker> waker = std::make_shared<AckWaker>(nullptr);  // no loop: nothing to wake
  RelpSession session{RelpSettings{.max_data_size = 1024, .event_size = 16}, waker};
  std::vector<std::pair<std::string, AckQueue::Ticket>> messages;
  std::vector<bool> truncated;
  sluice::net::ReadTally tally;

  void message(std::string_view m, sluice::pipeline::MessageTraits traits, AckQueue::Ticket t) override {
    messages.emplace_back(std::string(m), t);
    truncated.push_back(traits.truncated);
  }
  std::string feed(std::string_view bytes) { return session.feed(bytes, *this, tally); }
  std::string replies() {
    uint64_t events = 0;
    return session.acks()->take_ready(events);
  }
};

// "TXNR COMMAND DATALEN DATA\n", as a client frames it.
std::string frame(uint32_t txnr, std::string_view command, std::string_view data) {
  std::string out = std::to_string(txnr) + " " + std::string(command) + " " + std::to_string(data.size());
  if (!data.empty()) (out += " ") += data;
  return out + "\n";
}

const std::string kOpen = frame(1, "open", "relp_version=0\nrelp_software=x\ncommands=syslog");

}  // namespace

TEST_CASE("open is answered with our offers, messages only once done, in order, close after them", "[relp]") {
  Session s;
  CHECK(s.feed(kOpen).empty());
  CHECK(s.replies() ==
        frame(1, "rsp", "200 OK\nrelp_version=0\nrelp_software=sluice," SLUICE_VERSION "\ncommands=syslog"));
  const std::string longer = "<13>app: longer than eventSize";
  CHECK(s.feed(frame(2, "syslog", "<13>app a") + frame(3, "syslog", "<13>app b") + frame(4, "syslog", longer)).empty());
  REQUIRE(s.messages.size() == 3);
  CHECK(s.messages[2].first == longer.substr(0, 16));
  CHECK(s.truncated == std::vector<bool>{false, false, true});
  CHECK(s.replies().empty());  // nothing done yet
  s.session.acks()->done(s.messages[1].second, 1);
  CHECK(s.replies().empty());  // 3 waits for 2
  CHECK(s.feed("5 close 0\n").empty());
  CHECK(s.session.closing());
  s.session.acks()->done(s.messages[0].second, 1);
  uint64_t events = 0;
  CHECK(s.session.acks()->take_ready(events) == "2 rsp 6 200 OK\n3 rsp 6 200 OK\n");
  CHECK(events == 2);
  CHECK(s.session.acks()->waiting() == 2);
  s.session.acks()->done(s.messages[2].second, 1);
  CHECK(s.replies() == "4 rsp 6 200 OK\n5 rsp 0\n");
  CHECK(s.session.acks()->waiting() == 0);
  CHECK(s.feed(frame(6, "syslog", "<13>x")) == "a frame after close");
}

TEST_CASE("an empty message is answered at once, a command not offered is refused, the session goes on", "[relp]") {
  Session s;
  s.feed(kOpen);
  s.replies();
  CHECK(s.feed(frame(2, "syslog", "") + frame(3, "starttls", "")).empty());
  CHECK(s.messages.empty());
  CHECK(s.replies() == "2 rsp 6 200 OK\n3 rsp 25 500 command not supported\n");
}

TEST_CASE("a session that does not open properly is refused with RELP's 500 and ended", "[relp]") {
  Session before_open;
  CHECK(before_open.feed(frame(1, "syslog", "<13>x")) == "a command before open");
  CHECK(before_open.replies() == "1 rsp 20 500 session not open\n");
  Session no_syslog;
  CHECK(no_syslog.feed(frame(1, "open", "commands=starttls")) == "the client does not offer the syslog command");
  CHECK_THAT(no_syslog.replies(), Catch::StartsWith("1 rsp 44 500 required command not supported by client"));
  Session twice;
  twice.feed(kOpen);
  CHECK(twice.feed(frame(2, "open", "commands=syslog")) == "a second open on an open session");
  CHECK(twice.session.farewell() == "0 serverclose 0\n");
}
