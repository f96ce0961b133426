#!/usr/bin/env bash
# bench/profile.awk on a made-up `perf script -F comm,tid,ip,sym` listing whose split is known:
# 20 samples on seven threads (headers padded as perf pads them).
#   tid 100, a stream worker: 4 of Sluice's code (the parse, the framer, the copy), 2 kernel reads
#     whose stacks end in frames without symbols (other; no vote: they count for the thread's role);
#   tid 101, a UDP source's loop: 2 of Sluice's code (the parse);
#   tid 200, the Kafka sink: 1 of Sluice's code, 2 of librdkafka's (one under malloc);
#   tid 201, a null sink (its loop is a lambda of start()): first 1 of Sluice's whose stack shows a
#     stream worker's frame, then 2 of librdkafka's: outvoted, the first counts for the sinks too;
#   tid 300, librdkafka's broker thread: 4;
#   tid 400, the main thread (no vote): 1 of Sluice's code, 1 other.
# Expected: sluice 45%, librdkafka 40%, other 15%; by thread, the sources' 2 threads 40% (Sluice's
# 30%, other 10%), the sinks' 2 threads 30% (Sluice's 10%, librdkafka's 20%), librdkafka's own 20%,
# the rest 10% (5% and 5%).
set -euo pipefail
awk_file="$(cd "$(dirname "$0")/../.." && pwd)/bench/profile.awk"

header() { printf '%-15s %7d \n' "$1" "$2"; }
frame() { printf '\t%16s %s\n' "$1" "$2"; }
worker() {  # a stream worker's stack under $1 (leaf)
  frame f57c4 "$1"
  frame f5e42 "sluice::syslog_tcp::SyslogFraming::feed[abi:cxx11]"
  frame 173e27 "sluice::net::StreamWorker::consume"
  frame 1a3a4 "[unknown]"
}
kernel_read() {
  frame ffffffff81ba4f70 _copy_to_iter
  frame ffffffff81e75623 sock_read_iter
  frame f82ec "__GI___libc_read (inlined)"
  frame 1a383 "[unknown]"
}
kafka_sink() {  # the Kafka sink's stack under $1 (leaf) [$2]
  frame 1000 "$1"
  [ -z "${2:-}" ] || frame 1001 "$2"
  frame 1d823b "sluice::kafka::KafkaSink::run"
  frame 1d9000 "[unknown]"
}
listing() {
  for leaf in sluice::syslog::parse_syslog sluice::syslog::parse_syslog sluice::syslog::find_line_end \
    "sluice::EventBatchBuilder::append"; do
    header sluice 100; worker "$leaf"; echo
  done
  for _ in 1 2; do header sluice 100; kernel_read; echo; done
  for _ in 1 2; do
    header sluice 101
    frame 3000 sluice::syslog::parse_syslog
    frame 3001 "sluice::syslog_udp::SyslogUdpSource::IoThread::loop"
    echo
  done
  header sluice 200; kafka_sink "sluice::kafka::Producer::produce_counted"; echo
  header sluice 200; kafka_sink rd_kafka_produce_batch; echo
  header sluice 200; kafka_sink __libc_malloc rd_malloc; echo
  header sluice 201; frame 4002 sluice::MemoryChannel::take; frame 4003 "sluice::net::StreamWorker::flush()"; echo
  for _ in 1 2; do
    header sluice 201
    frame 4000 rd_kafka_poll
    frame 4001 "sluice::NullSink::start()::{lambda()#1}::operator()"
    echo
  done
  for _ in 1 2 3 4; do header rdk:broker1 300; frame 2000 rd_kafka_snappy_compress_iov; frame 2001 "[unknown]"; echo; done
  header sluice 400; frame 5000 "sluice::run_agent(int, char**)"; echo
  header sluice 400; frame 5001 "__libc_start_main"; echo
}

out=$(listing | awk -f "$awk_file")
fail=0
expect() {
  if ! grep -qF -- "$1" <<<"$out"; then
    echo "missing: $1" >&2
    fail=1
  fi
}
expect "| sluice | 45.0% |"
expect "| librdkafka | 40.0% |"
expect "| other | 15.0% |"
expect "20 samples"
expect "| sluice::syslog::parse_syslog | 20.0% |"
expect "| rd_malloc | 5.0% |"
expect "| _copy_to_iter | 10.0% |"
expect "| the sources' (stream workers, UDP loops) | 2 | 40.0% | 30.0% | 0.0% | 10.0% |"
expect "| the sinks' (their run loops) | 2 | 30.0% | 10.0% | 20.0% | 0.0% |"
expect "| librdkafka's own (rdk:...) | 1 | 20.0% | 0.0% | 20.0% | 0.0% |"
expect "| the rest (main, cluster view, ...) | 1 | 10.0% | 5.0% | 0.0% | 5.0% |"
if [ "$fail" != 0 ]; then
  printf '%s\n' "$out" >&2
  exit 1
fi
echo "profile.awk: the parts and the threads as expected"
