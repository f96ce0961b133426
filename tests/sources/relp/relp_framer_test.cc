// RELP frames from a stream cut anywhere, and streams that are not RELP.

#include <catch2/catch.hpp>

#include <vector>

#include "sources/relp/relp_framer.h"

using namespace sluice::relp;

namespace {

struct Seen {
  uint32_t txnr;
  std::string command, data;
  bool operator==(const Seen&) const = default;
};

std::string feed_all(RelpFramer& framer, std::string_view bytes, std::vector<Seen>& seen, size_t chunk) {
  for (size_t at = 0; at < bytes.size(); at += chunk) {
    const std::string why = framer.feed(bytes.substr(at, chunk), [&](const RelpFrame& f) {
      seen.push_back({f.txnr, std::string(f.command), std::string(f.data)});
    });
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace

TEST_CASE("RELP frames come out whole however the stream is cut", "[relp]") {
  const std::string stream =
      "1 open 86 relp_version=0\nrelp_software=librelp,1.11.0,http://librelp.adiscon.com\ncommands=syslog\n"
      "2 syslog 24 <13>Dec  1 host app: one\n"
      "3 syslog 18 with\nan LF inside\n\n"
      "4 close 0\n";
  const std::vector<Seen> expected{
      {1, "open", "relp_version=0\nrelp_software=librelp,1.11.0,http://librelp.adiscon.com\ncommands=syslog"},
      {2, "syslog", "<13>Dec  1 host app: one"},
      {3, "syslog", "with\nan LF inside\n"},
      {4, "close", ""}};
  for (size_t chunk : {size_t{1}, size_t{2}, size_t{7}, stream.size()}) {
    INFO("chunks of " << chunk);
    RelpFramer framer(1024);
    std::vector<Seen> seen;
    CHECK(feed_all(framer, stream, seen, chunk).empty());
    CHECK(seen == expected);
    CHECK(framer.buffered() == 0);
  }
}

TEST_CASE("a stream that is not RELP is refused, saying why, a partial frame waits", "[relp]") {
  std::vector<Seen> seen;
  const auto why = [&](std::string_view bytes, size_t max = 1024) {
    RelpFramer framer(max);
    seen.clear();
    return feed_all(framer, bytes, seen, bytes.size());
  };
  CHECK_THAT(why("<13>plain syslog\n"), Catch::Contains("does not start with a transaction number"));
  CHECK_THAT(why("1234567890 syslog 1 x\n"), Catch::Contains("does not start with a transaction number"));
  CHECK_THAT(why("1 sys-log 1 x\n"), Catch::Contains("no command"));
  CHECK_THAT(why("1 syslog x\n"), Catch::Contains("no data length"));
  CHECK_THAT(why("1 syslog 3 abcd\n"), Catch::Contains("does not end with LF"));
  CHECK_THAT(why("1 close 0 \n"), Catch::Contains("no data does not end"));
  CHECK_THAT(why("1 syslog 2000 x", 1024), Catch::Contains("2000 bytes is larger than maxDataSize (1024)"));
  CHECK_THAT(why("1 syslog 1 a\n2 syslog 1 b\n3 x-y 1 a\n"), Catch::Contains("no command"));
  CHECK(seen.size() == 2);  // the frames before the broken one

  RelpFramer framer(1024);
  CHECK(framer.feed("7 syslog 10 <13>ab", [&](const RelpFrame&) { FAIL("not whole yet"); }).empty());
  CHECK(framer.buffered() == 18);
}

TEST_CASE("a frame trickled a byte at a time is appended to, not copied again on each read", "[relp]") {
  const std::string data(100'000, 'x');
  const std::string stream = "7 syslog " + std::to_string(data.size()) + " " + data + "\n";
  RelpFramer framer(128 * 1024);
  std::vector<Seen> seen;
  CHECK(feed_all(framer, stream, seen, 1).empty());
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].data == data);
  // Each byte copied a small number of times at most (the header's few bytes are re-parsed):
  // a copy per read would be ~5,000,000,000 bytes here.
  CHECK(framer.copied() < 3 * stream.size());
}
