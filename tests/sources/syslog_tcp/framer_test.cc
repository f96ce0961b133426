#include <catch2/catch.hpp>

#include "sources/syslog_tcp/framer.h"

using namespace sluice::syslog_tcp;

namespace {

struct Framed {
  std::vector<std::string> frames;
  std::vector<bool> truncated;
  std::vector<bool> ascii;
  FramerCounters counters;
};

Framed frame_in_pieces(const std::string& stream, const std::vector<size_t>& cuts, size_t max_frame = 2500) {
  Framed out;
  Framer framer(max_frame);
  auto on_frame = [&](std::string_view f, MessageTraits t) {
    out.frames.emplace_back(f);
    out.truncated.push_back(t.truncated);
    out.ascii.push_back(t.ascii);
  };
  size_t from = 0;
  for (size_t cut : cuts) {
    framer.feed(std::string_view(stream).substr(from, cut - from), on_frame, out.counters);
    from = cut;
  }
  framer.feed(std::string_view(stream).substr(from), on_frame, out.counters);
  framer.finish(on_frame, out.counters);
  return out;
}

}  // namespace

TEST_CASE("framer splits LF and CRLF lines and skips and counts blank lines", "[framer]") {
  const Framed f = frame_in_pieces("<13>one\n<13>two\r\n\n\r\n<13>three\n", {});
  CHECK(f.frames == std::vector<std::string>{"<13>one", "<13>two", "<13>three"});
  CHECK(f.counters.blank_lines == 2);
  CHECK(f.counters.frames == 3);
}

TEST_CASE("framer gives the same frames however the stream is split across reads", "[framer]") {
  const std::string stream = "<13>alpha\r\n<14>beta\n\n<15>gamma with spaces\r\nlast-without-newline";
  const std::vector<std::string> expected{"<13>alpha", "<14>beta", "<15>gamma with spaces", "last-without-newline"};
  for (size_t a = 0; a <= stream.size(); ++a) {
    for (size_t b = a; b <= stream.size(); b += 3) {
      const Framed f = frame_in_pieces(stream, {a, b});
      INFO("cuts at " << a << " and " << b);
      REQUIRE(f.frames == expected);
    }
  }
}

TEST_CASE("framer keeps an unterminated last frame at end of stream", "[framer]") {
  CHECK(frame_in_pieces("<13>no newline", {}).frames == std::vector<std::string>{"<13>no newline"});
  CHECK(frame_in_pieces("", {}).frames.empty());
}

TEST_CASE("framer cuts a frame longer than eventSize and skips its rest and keeps the connection", "[framer]") {
  const std::string big(50, 'x');
  for (size_t cut = 0; cut <= 60; ++cut) {
    INFO("split at " << cut);
    const Framed f = frame_in_pieces("short\n" + big + "\nafter\n", {std::min<size_t>(cut, 57)}, 10);
    REQUIRE(f.frames == std::vector<std::string>{"short", std::string(10, 'x'), "after"});
    CHECK(f.truncated == std::vector<bool>{false, true, false});
    CHECK(f.counters.truncated == 1);
  }
}

TEST_CASE("framer does not count the CR of a CRLF against eventSize", "[framer]") {
  const Framed f = frame_in_pieces("0123456789\r\n", {11}, 10);
  CHECK(f.frames == std::vector<std::string>{"0123456789"});
  CHECK(f.counters.truncated == 0);
}

TEST_CASE("framer never buffers more than eventSize for a sender that never sends a newline", "[framer]") {
  Framer framer(100);
  FramerCounters counters;
  int frames = 0;
  for (int i = 0; i < 1000; ++i) {
    framer.feed(
        std::string(64, 'y'), [&](std::string_view, MessageTraits) { ++frames; }, counters);
    REQUIRE(framer.buffered() <= 101);
  }
  CHECK(frames == 1);  // the first 100 bytes, truncated; the rest is skipped until a newline
}

TEST_CASE("framer cuts an unterminated last frame one byte over eventSize at end of stream", "[framer]") {
  // Found by the fuzzer: the carry keeps one extra byte for a possible CR.
  const Framed f = frame_in_pieces("0123456789X", {4}, 10);
  CHECK(f.frames == std::vector<std::string>{"0123456789"});
  CHECK(f.truncated == std::vector<bool>{true});
}

namespace {

// Every way of cutting `stream` into two or three reads must give the same frames.
void check_all_splits(const std::string& stream, const std::vector<std::string>& expected, size_t max_frame = 2500) {
  CHECK(frame_in_pieces(stream, {}, max_frame).frames == expected);
  for (size_t a = 0; a <= stream.size(); ++a) {
    INFO("cut at " << a);
    REQUIRE(frame_in_pieces(stream, {a}, max_frame).frames == expected);
    for (size_t b = a; b <= stream.size(); b += 7)
      REQUIRE(frame_in_pieces(stream, {a, b}, max_frame).frames == expected);
  }
}

}  // namespace

TEST_CASE("framer reads RFC 6587 octet-counted frames including LF inside them", "[framer]") {
  const std::string stream = "12 <13>one\ntwo!26 <14>1 - - - - - - hi\nthere";
  const Framed f = frame_in_pieces(stream, {});
  CHECK(f.frames == std::vector<std::string>{"<13>one\ntwo!", "<14>1 - - - - - - hi\nthere"});
  CHECK(f.counters.octet_counted == 2);
  check_all_splits(stream, f.frames);
}

TEST_CASE("framer detects the framing per frame in a mixed stream", "[framer]") {
  const std::string stream = "<13>line one\n9 <13>octet<13>line two\r\n10 <13>octet\n<13>three";
  check_all_splits(stream, {"<13>line one", "<13>octet", "<13>line two", "<13>octet", "<13>three"});
}

TEST_CASE("framer treats digits without a following space as an ordinary line", "[framer]") {
  check_all_splits("2026-11-30 12:00:00 no priority\n12345678901 too many digits\n7x\n",
                   {"2026-11-30 12:00:00 no priority", "12345678901 too many digits", "7x"});
}

TEST_CASE("framer ends a line at NUL as well as LF", "[framer]") {
  check_all_splits(std::string("<13>a\0<13>b\r\0<13>c\n", 18), {"<13>a", "<13>b", "<13>c"});
}

TEST_CASE("framer reads 1,000 lines that start with an epoch and a space, then 1,000 ordinary lines, as 2,000 frames",
          "[framer]") {
  // No PRI, an epoch first: common from scripts and appliances. Read as an octet count, the
  // first digits would have swallowed 1.7 GB of what followed.
  std::string stream;
  std::vector<std::string> expected;
  for (int i = 0; i < 1000; ++i) expected.push_back("1700000000 web01 app[1]: request " + std::to_string(i) + " done");
  for (int i = 0; i < 1000; ++i) expected.push_back("<13>Nov 30 12:00:00 web01 app: ordinary " + std::to_string(i));
  for (const std::string& line : expected) stream += line + "\n";
  for (size_t cut : {0, 1, 5, 10, 11, 12, 100, 1000}) {
    INFO("split at " << cut);
    const Framed f = frame_in_pieces(stream, {cut});
    REQUIRE(f.frames == expected);
    CHECK(f.counters.octet_counted == 0);
    CHECK(f.counters.truncated == 0);
  }
}

TEST_CASE("framer cuts an oversized octet-counted frame and skips exactly its counted rest", "[framer]") {
  // Octet-counted frames need no LF between them: the frames after a long one stay in sync.
  const std::string stream = "100 <" + std::string(99, 'x') + "5 <13>z<13>after\n";
  for (size_t cut : {0, 3, 4, 5, 20, 50, 104, 106}) {
    INFO("split at " << cut);
    const Framed f = frame_in_pieces(stream, {cut}, 40);
    REQUIRE(f.frames == std::vector<std::string>{"<" + std::string(39, 'x'), "<13>z", "<13>after"});
    CHECK(f.truncated == std::vector<bool>{true, false, false});
    CHECK(f.counters.truncated == 1);
  }
}

TEST_CASE("framer reads a count larger than 200000 bytes as the start of a line", "[framer]") {
  // rsyslog's MaxFrameSize: no sender frames that much; the number is part of a line.
  check_all_splits("300000 <13>" + std::string(20, 'x') + "\n5 <13>z<13>after\n",
                   {"300000 <13>" + std::string(20, 'x'), "<13>z", "<13>after"}, 40);
}

TEST_CASE("framer reads digits and a space not followed by '<' as a line, not as a count", "[framer]") {
  // Every SYSLOG-MSG begins with its PRI; "200 OK" is a line, not 200 bytes to take.
  check_all_splits("200 OK GET /index.html\n7 done\n12 <13>counted!<13>next\n",
                   {"200 OK GET /index.html", "7 done", "<13>counted!", "<13>next"});
  const Framed f = frame_in_pieces("200 OK\n12 <13>counted!", {});
  CHECK(f.counters.octet_counted == 1);
}

TEST_CASE("framer keeps digits and a space at end of stream as a line", "[framer]") {
  CHECK(frame_in_pieces("42 ", {}).frames == std::vector<std::string>{"42 "});
  CHECK(frame_in_pieces("42", {}).frames == std::vector<std::string>{"42"});
}

TEST_CASE("framer marks a partial frame cut by the agent (shutdown, idleTimeout) truncated, not whole", "[framer]") {
  for (const std::string& partial : {std::string("<13>half a li"), std::string("20 <13>half")}) {
    Framer framer(2500);
    FramerCounters counters;
    std::vector<std::pair<std::string, bool>> frames;
    auto on_frame = [&](std::string_view f, MessageTraits t) { frames.emplace_back(std::string(f), t.truncated); };
    framer.feed("<13>whole\n" + partial, on_frame, counters);
    framer.finish(on_frame, counters, /*cut=*/true);
    INFO(partial);
    REQUIRE(frames.size() == 2);
    CHECK(frames[0] == std::pair<std::string, bool>{"<13>whole", false});
    CHECK(frames[1].second);
    CHECK(counters.cut == 1);
    CHECK(counters.truncated == 0);
  }
}

TEST_CASE("framer gives an octet-counted frame cut short by end of stream as truncated", "[framer]") {
  const Framed f = frame_in_pieces("50 <13>only this", {});
  CHECK(f.frames == std::vector<std::string>{"<13>only this"});
  CHECK(f.truncated == std::vector<bool>{true});
}

TEST_CASE("framer with octet detection off reads digit-led frames as lines", "[framer]") {
  Framer framer(2500, false);
  FramerCounters counters;
  std::vector<std::string> frames;
  framer.feed(
      "5 <13>x\n", [&](std::string_view f, MessageTraits) { frames.emplace_back(f); }, counters);
  CHECK(frames == std::vector<std::string>{"5 <13>x"});
  CHECK(counters.octet_counted == 0);
}

TEST_CASE("framer tells a whole line of ASCII from one with a byte at or above 0x80", "[framer]") {
  // The high byte in the first 16-byte block, in a later one, in the short tail, and only after
  // the line's end (in the next line, which must not taint the one before).
  const std::string plain = "<13>Dec  6 19:48:11 host app: an ordinary line of text";
  const std::string first = "<13>\xC3\xA9t\xC3\xA9";
  const std::string later = plain + " caf\xC3\xA9 au lait, and more text to fill";
  const std::string tail = "<13>short \xE2\x82\xAC";
  const Framed f = frame_in_pieces(plain + "\n" + first + "\n" + later + "\n" + tail + "\n" + plain + "\n<13>ok", {});
  REQUIRE(f.frames == std::vector<std::string>{plain, first, later, tail, plain, "<13>ok"});
  // The last frame ends with the stream (finish(): from the carry-over, not looked at).
  CHECK(f.ascii == std::vector<bool>{true, false, false, false, true, false});

  // A line that comes in two reads is put together from the carry-over: not looked at, so not
  // said to be ASCII (the decoder checks it itself).
  const Framed split = frame_in_pieces(plain + "\n" + plain + "\n", {plain.size() + 10});
  CHECK(split.ascii == std::vector<bool>{true, false});
  // A high byte that only the short tail's byte loop sees: a line under 16 bytes at a read's end.
  const Framed short_line = frame_in_pieces("<13>x \xC3\xA9\n", {});
  CHECK(short_line.ascii == std::vector<bool>{false});
  CHECK(frame_in_pieces("<13>x e\n", {}).ascii == std::vector<bool>{true});
  // An octet-counted frame is taken by its count, unscanned.
  const Framed counted = frame_in_pieces(std::to_string(plain.size()) + " " + plain, {});
  CHECK(counted.ascii == std::vector<bool>{false});
}
