#include <catch2/catch.hpp>

#include "sources/syslog_tcp/framer.h"

using namespace sluice::syslog_tcp;

namespace {

struct Framed {
  std::vector<std::string> frames;
  std::vector<bool> truncated;
  FramerCounters counters;
};

Framed frame_in_pieces(const std::string& stream, const std::vector<size_t>& cuts, size_t max_frame = 2500) {
  Framed out;
  LineFramer framer(max_frame);
  auto on_frame = [&](std::string_view f, bool t) {
    out.frames.emplace_back(f);
    out.truncated.push_back(t);
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
  LineFramer framer(100);
  FramerCounters counters;
  int frames = 0;
  for (int i = 0; i < 1000; ++i) {
    framer.feed(std::string(64, 'y'), [&](std::string_view, bool) { ++frames; }, counters);
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
