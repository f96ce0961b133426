#!/usr/bin/env bash
# bench/profile.awk on a made-up `perf script -F comm,tid,ip,sym` listing whose split is known:
# 10 samples on three threads.
#   tid 100, a stream worker: 4 of Sluice's code (the parse, the framer), 2 kernel reads whose
#     stacks end in libuv without a StreamWorker frame (other, counted for the thread's role);
#   tid 200, a sink: 1 of Sluice's code, 2 of librdkafka's (one under malloc);
#   tid 300, librdkafka's broker thread: 1.
# Expected: sluice 50%, librdkafka 30%, other 20%; by thread, the sources' 60% (Sluice's 40%,
# other 20%), the sinks' 30% (Sluice's 10%, librdkafka's 20%), librdkafka's own 10%.
set -euo pipefail
awk_file="$(cd "$(dirname "$0")/../.." && pwd)/bench/profile.awk"

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
sink() {  # a sink's stack under $1 (leaf) [$2]
  frame 1000 "$1"
  [ -z "${2:-}" ] || frame 1001 "$2"
  frame 1d823b "sluice::kafka::KafkaSink::run"
  frame 1d9000 "[unknown]"
}
listing() {
  for leaf in sluice::syslog::parse_syslog sluice::syslog::parse_syslog sluice::syslog::find_line_end \
    "sluice::EventBatchBuilder::append"; do
    printf 'sluice 100 \n'; worker "$leaf"; echo
  done
  for _ in 1 2; do printf 'sluice 100 \n'; kernel_read; echo; done
  printf 'sluice 200 \n'; sink "sluice::kafka::Producer::produce_counted"; echo
  printf 'sluice 200 \n'; sink rd_kafka_produce_batch; echo
  printf 'sluice 200 \n'; sink __libc_malloc rd_malloc; echo
  printf 'rdk:broker1 300 \n'; frame 2000 rd_kafka_snappy_compress_iov; frame 2001 "[unknown]"; echo
}

out=$(listing | awk -f "$awk_file")
fail=0
expect() {
  if ! grep -qF -- "$1" <<<"$out"; then
    echo "missing: $1" >&2
    fail=1
  fi
}
expect "| sluice | 50.0% |"
expect "| librdkafka | 30.0% |"
expect "| other | 20.0% |"
expect "10 samples"
expect "| sluice::syslog::parse_syslog | 20.0% |"
expect "| rd_malloc | 10.0% |"
expect "| _copy_to_iter | 20.0% |"
expect "| the sources' (stream workers, UDP loops) | 1 | 60.0% | 40.0% | 0.0% | 20.0% |"
expect "| the sinks' (their run loops) | 1 | 30.0% | 10.0% | 20.0% | 0.0% |"
expect "| librdkafka's own (rdk:...) | 1 | 10.0% | 0.0% | 10.0% | 0.0% |"
if [ "$fail" != 0 ]; then
  printf '%s\n' "$out" >&2
  exit 1
fi
echo "profile.awk: the parts and the threads as expected"
