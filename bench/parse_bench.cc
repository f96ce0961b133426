// Frame + parse cost per event, the source's per-event work without the sockets: a 4 MiB
// stream of 120-byte lines goes through the Framer, and each frame through the EventDecoder
// (UTF-8 check, copy into a batch, header parse) exactly as an io thread does.
//
//   build/bin/sluice-parse-bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Target (issue #3): <= 100 ns per event on the reference 2-core machine.

#include <benchmark/benchmark.h>

#include <string>

#include "sources/syslog/event_decoder.h"
#include "sources/syslog_tcp/framer.h"

using namespace sluice;
using namespace sluice::syslog_tcp;

namespace {

constexpr size_t kEventSize = 120;
constexpr size_t kStreamBytes = 4 << 20;
constexpr size_t kReadChunk = 256 * 1024;  // what an io thread reads at once

// A line of exactly kEventSize bytes (terminator included) from a prefix, padded.
std::string line(const std::string& prefix) {
  std::string l = prefix;
  l.resize(kEventSize - 1, 'x');
  return l + "\n";
}

std::string octet_counted(const std::string& prefix) {
  std::string frame = prefix;
  frame.resize(kEventSize - 4, 'x');
  return std::to_string(frame.size()) + " " + frame;
}

const std::string kApache = line(
    "<134>Nov 30 11:07:06 web-07 httpd: 127.0.0.1 - - [30/Nov/2026:11:07:06 +0000] \"GET /lg/00001/0000000042 HTTP/1.1\" 200 ");
const std::string k3164 =
    line("<86>Nov 30 11:07:06 web-01 sshd[2514]: Accepted publickey for deploy from 10.1.2.3 port 52144 ");
const std::string k5424 = line(
    "<165>1 2026-11-30T11:07:06.003Z web-01.example.com evntslog - ID47 [exampleSDID@32473 iut=\"3\"] An application event ");
const std::string kOctets =
    octet_counted("<86>Nov 30 11:07:06 web-01 sshd[2514]: Accepted publickey for deploy from 10.1.2.3 ");

void frame_and_parse(benchmark::State& state, const std::string& event, uint8_t keep_fields) {
  std::string stream;
  while (stream.size() + event.size() <= kStreamBytes) stream += event;
  const size_t events_per_stream = stream.size() / event.size();
  const ParseClock clock = ParseClock::now();
  EventDecoder decoder(keep_fields);
  Framer framer(2500);
  FramerCounters counters;
  uint64_t invalid_utf8 = 0;
  EventBatchBuilder builder(1000, 1000 * kEventSize);
  for (auto _ : state) {
    for (size_t at = 0; at < stream.size(); at += kReadChunk) {
      framer.feed(
          std::string_view(stream).substr(at, kReadChunk),
          [&](std::string_view frame, pipeline::MessageTraits traits) {
            decoder.decode(frame, traits, Charset::utf8, clock, builder, invalid_utf8);
            if (builder.size() >= 1000) benchmark::DoNotOptimize(builder.seal());
          },
          counters);
    }
  }
  if (counters.frames != events_per_stream * state.iterations()) state.SkipWithError("lost frames");
  state.SetItemsProcessed(static_cast<int64_t>(counters.frames));
  state.SetBytesProcessed(static_cast<int64_t>(stream.size() * state.iterations()));
  state.counters["ns_per_event"] = benchmark::Counter(static_cast<double>(counters.frames),
                                                      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK_CAPTURE(frame_and_parse, apache, kApache, 0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(frame_and_parse, rfc3164, k3164, 0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(frame_and_parse, rfc5424, k5424, 0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(frame_and_parse, octet_counted_3164, kOctets, 0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(frame_and_parse, rfc5424_keep_hostname, k5424, keep_hostname)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
