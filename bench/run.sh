#!/usr/bin/env bash
# The benchmark: the whole pipeline on this machine for a fixed duration, several runs, medians.
#
#   bash bench/run.sh --summarize bench/results/<time>   # medians and plot of an earlier run
#   bash bench/run.sh [--duration 30s] [--runs 3] [--rate 0] [--connections 4] [--kafka mock|real]
#                     [--variants "kafka kafka-shared kafka-scraped null acks-all acks-all-sized
#                                  acks-all-seed ramp tls relp headers fair interceptors selector regex udp rsyslog
#                                  rsyslog-udp syslog-ng flume avro flume-avro"]
#                     [--sink-property "k = v"]... [--size 120] [--partitions 10] [--acks 0|1|all]
#                     [--channel memory|spillable] [--reference DIR] [--out DIR] [--profile SECONDS]
#
# Variants: kafka (the seed's shape and settings: 10 sinks, acks=0, snappy, one producer each),
# kafka-shared (the 10 sinks share one librdkafka producer), kafka-scraped (both metrics endpoints
# scraped every second), null (sinks discard: the agent's own cost), acks-all (acks=all,
# linger 5 ms), acks-all-sized (the same with a channel of 240,000 events, room for what four takes
# per sink hold in flight, and maxTakesInFlight 4), acks-all-seed (the seed's settings with acks=all
# and idempotence), ramp (the sender rises to --rate over a third of the run), tls (the seed's shape
# with ssl = true, sluice-loadgen --tls verifying the agent's certificate), relp (a type = relp
# source, ackAfter = kafka, acks=all with linger 5 ms, sluice-loadgen --relp with a window of
# BENCH_RELP_WINDOW = 4096 per connection: acknowledged events/s and ack latency p50/p99 in a table
# of their own), headers (the kafka variant with kafka.headers = Facility Severity host: every message
# produced with its record headers by rd_kafka_producev, one call each), fair (the kafka variant with
# maxEventsPerSecondPerClient = 1,000,000,000: every read charged to its client's budget, which never
# binds; the load's connections are one client), interceptors (the kafka
# variant with Flume's timestamp, host and static interceptors), selector (the interceptors variant
# with a multiplexing selector on Severity over two channels: the load's events are info, info, info,
# error in turn, errors into a second channel drained by kk9 and kk10), regex (the kafka variant with a
# regex_extractor of one group and a regex_filter that keeps every event), udp (the seed's shape
# with a syslogudp source, sluice-loadgen --udp: one datagram per event; what the agent counted as
# dropped is its own column), avro (a type = avro source, ackAfter = kafka, acks=1 with linger 5 ms and
# batches of 10,000 messages, sluice-loadgen --protocol avro: appendBatch calls of 100 events with three
# headers, BENCH_AVRO_WINDOW = 128 calls in flight per connection; acknowledged events/s in the acks
# table); the peers, with the tuned configurations of bench/peers/ on the same
# load and broker: rsyslog 8.2302 (imtcp; and rsyslog-udp: imudp, against the udp variant's load)
# and syslog-ng 3.38 (Debian's packages unpacked into build/peers/ by tests/peers/unpack.sh, not
# installed) and Apache Flume 1.11 (from
# Maven Central, .ci/install-java --flume) running the seed's topology (flume-avro: the same with an
# Avro source and acks=1 with linger 5 ms and batch.size 65536, tuned as its users tune it, on the
# avro variant's load: Flume's tier-2 collector). --sink-property adds a line
# to every Sluice sink (BENCH_BATCH=N changes the seed's batch.num.messages 500, BENCH_CAPACITY=N
# the channel's capacity 60,000). --reference DIR (a build directory of another commit) adds, for
# every Sluice variant V, a variant V@ref run by DIR/bin/sluice on the same load in the same run:
# the regression check of a change is the ratio V / V@ref.
#
# The shape's knobs (bench/sizing.sh sweeps them): --size is the sender's bytes per event;
# --partitions N makes the topic N partitions with the sinks unkeyed (librdkafka's partitioner
# spreads them; by default the ten sinks key their messages 0-9 on a topic of 10); --acks sets
# the Kafka variants' acks (1 and all with linger 5 ms, as acks-all; 0 keeps the seed's 500);
# --channel spillable makes c1 a spillablememory channel of the same memoryCapacity on the run's
# directory. Every Sluice run serves /metrics: its pipeline latency p50/p99 (from
# sluice_pipeline_latency_seconds, all sinks, read just before the agent stops) is in the table.
# --profile SECONDS records every Sluice run's agent with perf (DWARF call graphs, 999 Hz) for that
# long from a third into the load, and splits it into Sluice's own code and librdkafka's
# (bench/profile.awk: libc and the kernel count for their caller), in all and by thread (the
# sources', the sinks', librdkafka's own): profile.md in the run's directory.
#
# Per run: the broker ← agent (or a peer) ← sluice-loadgen. The broker is sluice-kafka-mock (a
# process of its own per run) or, with --kafka real, Apache Kafka 4.4 (tests/kafka/cluster.sh, one
# node, started once; a topic of 10 partitions per run, deleted after it). Reports events/s stored
# in Kafka (from the broker's offsets, not the agent's counters), the sender's rate, loss (sent -
# stored), agent CPU-seconds per million events (user+sys from /proc), agent peak RSS, and the CPU
# of broker and sender. Per-second CSVs and a PNG plot land in bench/results/<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=30 runs=3 rate=0 connections=4 variants="kafka null rsyslog" summarize_only="" sink_properties=() kafka=mock
reference="" size=120 partitions="" acks_override="" channel=memory out="" profile=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=${2%s}; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --sink-property) sink_properties+=("$2"); shift 2 ;;
    --kafka) kafka=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --partitions) partitions=$2; shift 2 ;;
    --acks) acks_override=$2; shift 2 ;;
    --channel) channel=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;  # where the results go (default bench/results/<time>)
    --profile) profile=${2%s}; shift 2 ;;
    --summarize) summarize_only=$2; shift 2 ;;
    --reference) reference=$(cd "$OLDPWD" && cd "$2" && pwd) || { echo "bench: no directory $2" >&2; exit 2; }
                 shift 2 ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2 ;;
  esac
done
case "$kafka" in mock|real) ;; *) echo "bench: --kafka is mock or real, not $kafka" >&2; exit 2 ;; esac
case "$acks_override" in ""|0|1|all) ;; *) echo "bench: --acks is 0, 1 or all, not $acks_override" >&2; exit 2 ;; esac
for v in $variants; do  # what the agent would refuse at start, refused here with the reason
  case "$v:$acks_override" in
    relp:0) echo "bench: relp answers after Kafka's acknowledgement: --acks 0 has none" >&2; exit 2 ;;
    acks-all-seed:0|acks-all-seed:1) echo "bench: acks-all-seed is idempotent: it needs acks all" >&2; exit 2 ;;
  esac
done
case "$channel" in memory|spillable) ;; *) echo "bench: --channel is memory or spillable, not $channel" >&2; exit 2 ;; esac
case " $variants " in *@ref*)
  echo "bench: name the plain variants; --reference DIR adds their @ref runs" >&2; exit 2 ;;
esac
if [ -n "$reference" ]; then
  [ -x "$reference/bin/sluice" ] || { echo "bench: no $reference/bin/sluice to compare with" >&2; exit 2; }
  with_references=""
  for v in $variants; do
    with_references+=" $v"
    # Peers have no reference; fair's property is newer than the references it is measured against
    # (compare it with kafka@ref).
    case "$v" in rsyslog|rsyslog-udp|syslog-ng|flume|flume-avro|fair) ;; *) with_references+=" $v@ref" ;; esac
  done
  variants=${with_references# }
fi

bash .ci/install-deps gnuplot-nox
[ -z "$profile" ] || bash .ci/install-deps linux-perf
[ -x build/bin/sluice ] || bash .ci/build
case " $variants " in *" flume "* | *" flume-avro "*) bash .ci/install-java --flume ;; esac
[ "$kafka" = mock ] || bash .ci/install-java
[ -n "$out" ] || out="$PWD/bench/results/$(date +%Y%m%d-%H%M%S)"
tick=$(getconf CLK_TCK)
bin=build/bin
# The sum of a family's samples (every label set) in a /metrics text on stdin.
metric_sum() { awk -v f="$1" 'index($0, f "{") == 1 || index($0, f " ") == 1 {s += $NF} END {printf "%d", s}'; }

cpu_seconds() { awk -v t="$tick" '{print ($14+$15)/t}' "/proc/$1/stat"; }
peak_rss_mb() { awk '/VmHWM/{printf "%.0f", $2/1024}' "/proc/$1/status"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
              echo $((20000 + RANDOM % 20000)); }
wait_file() { for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }
# Alive: signalled fine and not a zombie (the peers, started in a $(...), are adopted by PID 1,
# which may not reap them).
alive() { kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
stop_pid() { kill -TERM "$1" 2>/dev/null || true; for _ in $(seq 300); do alive "$1" || return 0; sleep 0.1; done; kill -KILL "$1" 2>/dev/null || true; }

# What a run starts (agent or peer, mock broker, watchers), so that any exit stops it, by PID.
running=() kafka_dir=""
started() { running+=("$1"); }
cleanup() {
  local pid
  for pid in "${running[@]}"; do alive "$pid" && stop_pid "$pid"; done
  if [ -n "$kafka_dir" ]; then tests/kafka/cluster.sh stop "$kafka_dir"; rm -rf "$kafka_dir"/node-*/data; fi
}
trap cleanup EXIT

# p50,p99 in ms of sluice_pipeline_latency_seconds in a /metrics text (all sinks' buckets summed),
# interpolated within a bucket as Prometheus' histogram_quantile does; "-,-" when it has none.
latency_quantiles() {
  awk -v f="${latency_family}_bucket" 'index($0, f "{") == 1 {
      match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5)
      c[le] += $NF; if (le != "+Inf") bounds[le] = le + 0 }
    END {
      n = 0; for (b in bounds) sorted[++n] = bounds[b]
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (sorted[j] < sorted[i]) { t = sorted[i]; sorted[i] = sorted[j]; sorted[j] = t }
      total = c["+Inf"]; if (total == 0) { print "-,-"; exit }
      split("0.5 0.99", qs, " ")
      for (k = 1; k <= 2; k++) {
        rank = qs[k] * total; lower = 0; below = 0; v = sorted[n]
        for (i = 1; i <= n; i++) {
          key = ""; for (b in bounds) if (bounds[b] == sorted[i]) key = b
          if (c[key] >= rank) { v = lower + (sorted[i] - lower) * (rank - below) / (c[key] - below > 0 ? c[key] - below : 1); break }
          lower = sorted[i]; below = c[key]
        }
        printf "%s%.2f", (k > 1 ? "," : ""), v * 1000
      }
      print "" }' "$1"
}

peer_config() {  # $1 template in bench/peers/ $2 output, then port bootstrap workdir topic
  sed -e "s|{port}|$3|g; s|{bootstrap}|$4|g; s|{workdir}|$5|g; s|{topic}|$6|g" "bench/peers/$1" > "$2"
}

start_rsyslog() {  # $1 port $2 bootstrap $3 workdir $4 topic [$5 input: imtcp|imudp]; prints the pid
  local root input=${5:-imtcp}
  root=$(bash tests/peers/unpack.sh rsyslog) || return 1
  # The same queues, ruleset and omkafka, then the input (imtcp or imudp) bound to that ruleset.
  peer_config rsyslog-omkafka.conf.in "$3/rsyslog.conf" "$@"
  peer_config "rsyslog-$input.conf.in" "$3/rsyslog-input.conf" "$@"
  cat "$3/rsyslog-input.conf" >>"$3/rsyslog.conf"
  "$root/usr/sbin/rsyslogd" -n -f "$3/rsyslog.conf" -i "$3/rsyslog.pid" -M "$root/usr/lib/x86_64-linux-gnu/rsyslog" \
    >"$3/agent.log" 2>&1 &
  echo $!
}

start_syslog_ng() {  # $1 port $2 bootstrap $3 workdir $4 topic; prints the pid
  local root
  root=$(bash tests/peers/unpack.sh syslog-ng) || return 1
  peer_config syslog-ng-kafka.conf.in "$3/syslog-ng.conf" "$@"
  LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu:$root/usr/lib/syslog-ng" \
    "$root/usr/sbin/syslog-ng" -F --no-caps -f "$3/syslog-ng.conf" -R "$3/persist" -p "$3/pid" -c "$3/ctl" \
    --module-path "$root/usr/lib/syslog-ng/3.38" >"$3/agent.log" 2>&1 &
  echo $!
}

start_flume() {  # $1 port $2 bootstrap $3 workdir $4 topic [$5 template]; prints the pid
  peer_config "${5:-flume.properties.in}" "$3/flume.properties" "$@"
  printf 'status = warn\nappender.file.type = File\nappender.file.name = file\nappender.file.fileName = %s\n%s\n%s\n%s\n' \
    "$3/flume.log" "appender.file.layout.type = PatternLayout" "rootLogger.level = INFO" \
    "rootLogger.appenderRef.file.ref = file" > "$3/log4j2.properties"
  # flume-ng's own defaults: a 1 GB heap here (the seed's servers ran it with more).
  java -Xmx1g -Xms1g -Dlog4j.configurationFile="$3/log4j2.properties" -cp "$PWD/build/java/flume/*" \
    org.apache.flume.node.Application -f "$3/flume.properties" -n tier2 >"$3/agent.log" 2>&1 &
  echo $!
}

start_flume_avro() {  # Flume's collector: an Avro source, acks=1; $1 port $2 bootstrap $3 workdir $4 topic
  start_flume "$@" flume-avro.properties.in
}

wait_port() {  # $1 port $2 pid [--udp]: until something listens there while the process lives (at most 60 s)
  local hex; hex=$(printf ':%04X ' "$1")
  for _ in $(seq 600); do
    alive "$2" || return 1
    if [ "${3:-}" = --udp ]; then grep -q "$hex" /proc/net/udp && return 0
    else (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; fi
    sleep 0.1
  done
  return 1
}

# The broker: a mock per run, or one real Kafka for the whole benchmark (its data goes with it).
start_real_kafka() {
  kafka_dir="$out/kafka"  # set first: if the start fails half way, cleanup stops what it launched
  tests/kafka/cluster.sh start "$kafka_dir" --nodes 1 --heap 2g --owner $$ >/dev/null
  echo "bench: Apache Kafka 4.4 at $(cat "$kafka_dir/bootstrap")" >&2
}

one_run() {  # $1 variant $2 run number → appends a row to $out/runs.csv
  local variant=$1 n=$2 dir="$out/$1-$2"
  # V@ref: variant V, run by the reference build's agent.
  local agent_bin=$bin/sluice
  if [[ $variant == *@ref ]]; then agent_bin=$reference/bin/sluice; fi
  local shape=${variant%@ref}
  rm -rf "$dir" && mkdir -p "$dir"  # nothing of an earlier run with the same --out (its ready file, its spill)
  local broker bootstrap topic=ApacheLog
  if [ "$kafka" = real ]; then
    topic="run-${1//@/-}-$2"  # no @ in a Kafka topic name
    tests/kafka/cluster.sh topic "$kafka_dir" "$topic" "${partitions:-10}"
    broker=$(cat "$kafka_dir/node-1/pid")
    bootstrap=$(cat "$kafka_dir/bootstrap")
  else
    "$bin/sluice-kafka-mock" --topic ApacheLog --partitions "${partitions:-10}" --bootstrap-file "$dir/bootstrap" >"$dir/broker.log" 2>&1 &
    broker=$!; started "$broker"
    wait_file "$dir/bootstrap"
    bootstrap=$(head -1 "$dir/bootstrap")
  fi
  local agent targets=() sink_type=com.igloosec.KafkaSink acks=0 linger=500 ramp=() share=false scrape=false scraper=
  local source_type=multiport_syslogtcp transport=() counted_drops=-
  local idempotence=false capacity=${BENCH_CAPACITY:-60000} window="" variant_sink_lines=() variant_source_lines=()
  local errors_channel=false batch_messages=${BENCH_BATCH:-500}
  case "$shape" in
    null) sink_type=null ;;
    acks-all) acks=all linger=5 ;;
    acks-all-sized) acks=all linger=5 capacity=240000 window=4 ;;
    acks-all-seed) acks=all idempotence=true ;;
    kafka-shared) share=true ;;
    kafka-scraped) scrape=true ;;
    udp) source_type=syslogudp transport=(--udp) scrape=true ;;  # scraped, and its counted drops read
    tls) transport=(--tls --ca "$out/tls/ca.pem") ;;
    headers) variant_sink_lines=("kafka.headers = Facility Severity host") ;;  # record headers: producev per message
    fair) variant_source_lines=("maxEventsPerSecondPerClient = 1000000000") ;;  # a client budget that never binds
    interceptors)  # Flume's header interceptors: a header block written per event
      variant_source_lines=("interceptors = ts h dc" "interceptors.ts.type = timestamp" "interceptors.h.type = host"
                            "interceptors.dc.type = static" "interceptors.dc.key = datacenter"
                            "interceptors.dc.value = ams1") ;;
    selector)  # the header interceptors, then each event into c1 or (errors) c2 by its Severity
      errors_channel=true transport=(--priorities 134,134,134,131)
      variant_source_lines=("interceptors = ts h dc" "interceptors.ts.type = timestamp" "interceptors.h.type = host"
                            "interceptors.dc.type = static" "interceptors.dc.key = datacenter"
                            "interceptors.dc.value = ams1" "selector.type = multiplexing"
                            "selector.header = Severity" "selector.mapping.3 = c2" "selector.default = c1") ;;
    regex)  # a regex_extractor (one group) and a regex_filter that keeps every event: two matches per event
      variant_source_lines=("interceptors = x f" "interceptors.x.type = regex_extractor"
                            'interceptors.x.regex = GET /lg/(\\d+)/' "interceptors.x.serializers = c"
                            "interceptors.x.serializers.c.name = connection" "interceptors.f.type = regex_filter"
                            'interceptors.f.regex = HTTP/1\\.1') ;;
    relp) source_type=relp acks=all linger=5 transport=(--relp --window "${BENCH_RELP_WINDOW:-4096}") ;;
    avro | flume-avro) source_type=avro acks=1 linger=5 batch_messages=${BENCH_BATCH:-10000}
      transport=(--protocol avro --batch 100 --window "${BENCH_AVRO_WINDOW:-128}") ;;
    rsyslog-udp) transport=(--udp) ;;
    ramp) [ "$rate" != 0 ] || { echo "the ramp variant needs --rate" >&2; exit 2; }
          ramp=(--ramp "$((duration / 3))s") ;;
  esac
  case "$acks_override" in
    "") ;;
    0) acks=0 linger=500 ;;
    *) acks=$acks_override linger=5 ;;
  esac
  if [ "$variant" = rsyslog ] || [ "$variant" = syslog-ng ] || [ "$variant" = flume ] || [ "$variant" = rsyslog-udp ] ||
     [ "$variant" = flume-avro ]; then
    local port; port=$(free_port)
    if [ "$variant" = rsyslog-udp ]; then
      agent=$(start_rsyslog "$port" "$bootstrap" "$dir" "$topic" imudp)
    else
      agent=$("start_${variant//-/_}" "$port" "$bootstrap" "$dir" "$topic")
    fi || { echo "bench: cannot run the $variant peer (above); leave it out of --variants" >&2; exit 1; }
    started "$agent"
    targets=(-t "127.0.0.1:$port")
    wait_port "$port" "$agent" "${transport[@]}" ||
      { cat "$dir/agent.log" >&2; echo "bench: $variant did not listen on $port" >&2; exit 1; }
  else
    local channel_type=memory capacity_key=capacity
    [ "$channel" = memory ] || channel_type=spillablememory capacity_key=memoryCapacity
    {
      sed -e "s|{ports}|0 0|" -e "s|^tier2.channels.c1.capacity = .*|tier2.channels.c1.$capacity_key = $capacity|" \
        -e "s|^\(tier2.sources.r1.type = \).*|\1$source_type|" \
        -e "s|^tier2.channels.c1.type = .*|tier2.channels.c1.type = $channel_type|" \
        bench/sluice-seed.properties.in |
        if [ "$errors_channel" = true ]; then  # c2, as c1, for the errors; kk9 and kk10 drain it
          sed -e "s|^tier2.channels = c1$|tier2.channels = c1 c2|" -e "s|^tier2.sources.r1.channels = c1$|& c2|"
          echo "tier2.channels.c2.type = $channel_type"
          echo "tier2.channels.c2.$capacity_key = $capacity"
          echo "tier2.channels.c2.transactionCapacity = 8000"
        else
          cat
        fi
      # Events longer than the source's default eventSize (2,500) would be cut (Incomplete).
      [ "$size" -le 2500 ] || echo "tier2.sources.r1.eventSize = $((size + 64))"
      if [ "$channel" = spillable ]; then  # the template's c1, its capacity in memory, made spillable
        echo "tier2.channels.c1.dataDir = $dir/spill"
        echo "tier2.channels.c1.fsync = never"
      fi
      for property in "${variant_source_lines[@]}"; do echo "tier2.sources.r1.$property"; done
      if [ "$shape" = tls ]; then
        echo "tier2.sources.r1.ssl = true"
        echo "tier2.sources.r1.ssl.certificate = $out/tls/server.pem"
        echo "tier2.sources.r1.ssl.key = $out/tls/server.key"
      fi
      for k in $(seq 1 10); do
        if [ "$errors_channel" = true ] && [ "$k" -ge 9 ]; then echo "tier2.sinks.kk$k.channel = c2"
        else echo "tier2.sinks.kk$k.channel = c1"; fi
        echo "tier2.sinks.kk$k.type = $sink_type"
        if [ "$sink_type" != null ]; then
          echo "tier2.sinks.kk$k.topic = $topic"
          echo "tier2.sinks.kk$k.brokerList = $bootstrap"
          [ -n "$partitions" ] || echo "tier2.sinks.kk$k.key = $((k - 1))"
          echo "tier2.sinks.kk$k.shareProducer = $share"
          echo "tier2.sinks.kk$k.kafka.compression.codec = snappy"
          echo "tier2.sinks.kk$k.kafka.request.required.acks = $acks"
          echo "tier2.sinks.kk$k.kafka.send.buffer.bytes = 16777216"
          echo "tier2.sinks.kk$k.kafka.batch.num.messages = $batch_messages"
          echo "tier2.sinks.kk$k.kafka.queue.buffering.max.ms = $linger"
          echo "tier2.sinks.kk$k.kafka.queue.buffering.max.messages = 50000"
          [ "$idempotence" = false ] || echo "tier2.sinks.kk$k.kafka.producer.enable.idempotence = true"
          [ -z "$window" ] || echo "tier2.sinks.kk$k.maxTakesInFlight = $window"
          for property in "${sink_properties[@]}" "${variant_sink_lines[@]}"; do echo "tier2.sinks.kk$k.$property"; done
        fi
      done
    } > "$dir/agent.properties"
    "$agent_bin" -f "$dir/agent.properties" -n tier2 --ready-file "$dir/ready" --status-interval 1s --metrics 127.0.0.1:0 \
      >"$dir/agent.log" 2>&1 &
    agent=$!; started "$agent"
    wait_file "$dir/ready" || { cat "$dir/agent.log"; exit 1; }
    if [ "$scrape" = true ]; then  # a Prometheus-like scraper: both endpoints once a second
      local mport; mport=$(sed -n 's/^metrics.port=//p' "$dir/ready")
      ( while kill -0 "$agent" 2>/dev/null; do
          for path in /metrics /metrics.json; do
            { exec 3<>"/dev/tcp/127.0.0.1/$mport" && printf 'GET %s HTTP/1.0\r\n\r\n' "$path" >&3 && cat <&3 >/dev/null; } 2>/dev/null || true
          done
          sleep 1
        done ) &
      scraper=$!; started "$scraper"
    fi
    for port in $(sed -n 's/^source.r1.ports=//p' "$dir/ready"); do targets+=(-t "127.0.0.1:$port"); done
  fi
  local cpu0 bcpu0; cpu0=$(cpu_seconds "$agent"); bcpu0=$(cpu_seconds "$broker")
  local watcher=""
  if [ "$shape" != null ]; then  # (not `[ ] || cmd &`: that backgrounds a subshell, and $! would be its PID)
    "$bin/sluice-loadgen" --watch-offsets --bootstrap "$bootstrap" --topic "$topic" -d "$((duration + 70))s" \
      --csv "$dir/offsets.csv" -q >/dev/null 2>&1 &
    watcher=$!; started "$watcher"
  fi

  local profiler=""
  if [ -n "$profile" ] && [ -s "$dir/ready" ]; then  # a Sluice run: its agent, from a third into the load
    ( sleep "$((duration / 3))"
      exec perf record -q -F 999 --call-graph dwarf,16384 -p "$agent" -o "$dir/perf.data" -- sleep "$profile" ) \
      >"$dir/perf.log" 2>&1 &
    profiler=$!; started "$profiler"
  fi
  "$bin/sluice-loadgen" "${targets[@]}" "${transport[@]}" -c "$connections" -r "$rate" -s "$size" -d "${duration}s" "${ramp[@]}" -q \
    --summary-json "$dir/sent.json" 2>"$dir/loadgen.log" || true
  [ -z "$profiler" ] || wait "$profiler" || { cat "$dir/perf.log" >&2; echo "bench: perf failed on run $variant-$n" >&2; exit 1; }
  if [ ! -s "$dir/sent.json" ]; then
    cat "$dir/loadgen.log" "$dir/agent.log" >&2
    echo "bench: run $variant-$n failed (above: the sender's and the agent's output)" >&2
    exit 1
  fi
  local sent seconds sender_cpu
  sent=$(sed -n 's/.*"sent":\([0-9]*\),"seconds".*/\1/p' "$dir/sent.json" | head -1)
  seconds=$(sed -n 's/.*"seconds":\([0-9.e+]*\),.*/\1/p' "$dir/sent.json" | head -1)
  sender_cpu=$(sed -n 's/.*"cpu_seconds":\([0-9.e+]*\),.*/\1/p' "$dir/sent.json" | head -1)
  local stored=0 previous=-1
  if [ "$shape" = null ]; then
    sleep 2
  else
    local still=0
    for _ in $(seq 90); do  # until the broker's offsets have not moved for 3 s (Flume pauses for over 1 s)
      stored=$("$bin/sluice-loadgen" --offsets --bootstrap "$bootstrap" --topic "$topic")
      if [ "$stored" = "$previous" ]; then still=$((still + 1)); else still=0; fi
      [ "$still" -ge 3 ] && break
      previous=$stored; sleep 1
    done
  fi
  local cpu1 bcpu1 rss; cpu1=$(cpu_seconds "$agent"); bcpu1=$(cpu_seconds "$broker"); rss=$(peak_rss_mb "$agent")
  local latency=-,-
  if [ -s "$dir/ready" ]; then  # a Sluice run: its pipeline latency over the whole run, all sinks
    local mport; mport=$(sed -n 's/^metrics.port=//p' "$dir/ready")
    ( exec 3<>"/dev/tcp/127.0.0.1/$mport" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && timeout 10 cat <&3 ) >"$dir/metrics.txt" 2>/dev/null || true
    latency=$(latency_quantiles "$dir/metrics.txt")
    local cut; cut=$(metric_sum "$truncated_family" <"$dir/metrics.txt")
    [ "$cut" = 0 ] || { echo "bench: run $variant-$n cut $cut events at eventSize: not the size asked for" >&2; exit 1; }
  fi
  if [ "$shape" = udp ]; then  # what the agent counted as dropped (the kernel's, at shutdown) before it stops
    local mport; mport=$(sed -n 's/^metrics.port=//p' "$dir/ready")
    local scrape; scrape=$( { exec 3<>"/dev/tcp/127.0.0.1/$mport" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3; } )
    counted_drops=0
    for family in "${udp_drop_families[@]}"; do
      counted_drops=$((counted_drops + $(metric_sum "$family" <<<"$scrape")))
    done
  fi
  stop_pid "$agent"; wait "$agent" 2>/dev/null || true
  [ -z "$scraper" ] || { kill "$scraper" 2>/dev/null || true; wait "$scraper" 2>/dev/null || true; }
  [ -z "$watcher" ] || { kill "$watcher" 2>/dev/null || true; wait "$watcher" 2>/dev/null || true; }
  if [ "$kafka" = real ]; then
    timeout -k 5 60 java -cp "build/java/kafka/*" org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" --delete \
      --topic "$topic" >/dev/null 2>&1 || true  # the disk back for the next run
  else
    stop_pid "$broker"; wait "$broker" 2>/dev/null || true
  fi
  if [ "$shape" = null ]; then stored=$(sed -n 's/.* replayed from disk, \([0-9]*\) sent.*/\1/p' "$dir/agent.log" | tail -1); fi
  # A broker slower than the sender keeps storing after the sender stops: the rate is over the time
  # until the last event was stored, never shorter than the sender's. The watcher samples once a
  # second: from the last sample short of the final count, the rest is taken at the rate of the
  # second before it (not the whole second up to the next sample).
  if [ -s "$dir/offsets.csv" ]; then
    seconds=$(awk -F, -v total="$stored" -v s="$seconds" '$1 ~ /^[0-9.]+$/ {
      if ($2 + 0 >= total + 0) {
        t = $1
        if (n > 1 && ps > pps && pt > ppt) { u = pt + (total - ps) * (pt - ppt) / (ps - pps); if (u < t) t = u }
        if (t > s + 0) s = t
        exit
      }
      ppt = pt; pps = ps; pt = $1; ps = $2; n++ } END { print s }' "$dir/offsets.csv")
  fi
  # The slowest second of the load from its 5th to its last whole one (the broker's offsets, once a
  # second): "every second over N" in the docs comes from this column.
  local slowest=-
  if [ -s "$dir/offsets.csv" ]; then
    slowest=$(awk -F, -v d="$duration" '$1 ~ /^[0-9.]+$/ && $1 >= 5 && $1 <= d - 1 {
      if (min == "" || $3 + 0 < min) min = $3 + 0 } END { print min == "" ? "-" : sprintf("%.0f", min) }' "$dir/offsets.csv")
  fi
  running=()  # all stopped
  if [ -s "$dir/perf.data" ]; then  # the broker and agent are gone: the machine is the report's
    perf script -i "$dir/perf.data" -F comm,tid,ip,sym 2>/dev/null | awk -f bench/profile.awk >"$dir/profile.md"
    echo "bench: profile of $variant-$n: $dir/profile.md" >&2
  fi
  [ "${stored:-0}" -gt 0 ] || { cat "$dir/agent.log" >&2; echo "bench: run $variant-$n stored nothing in Kafka (above: its log)" >&2; exit 1; }
  awk -v v="$variant" -v n="$n" -v sent="$sent" -v stored="$stored" -v s="$seconds" -v c0="$cpu0" -v c1="$cpu1" \
      -v b0="$bcpu0" -v b1="$bcpu1" -v rss="$rss" -v scpu="$sender_cpu" -v counted="$counted_drops" -v latency="$latency" -v slowest="$slowest" 'BEGIN {
    printf "%s,%d,%d,%d,%d,%.0f,%.0f,%.3f,%.2f,%.2f,%d,%.2f,%s,%s,%s\n", v, n, sent, stored, sent - stored, stored / s, sent / s,
           (c1 - c0) / (stored / 1e6), (c1 - c0) / s, (b1 - b0) / s, rss, scpu / s, counted, latency, slowest }' >> "$out/runs.csv"
  tail -1 "$out/runs.csv" >&2
  if [ "$shape" = relp ] || [ "$shape" = avro ] || [ "$shape" = flume-avro ]; then  # what the sender saw answered
    sed -n 's/.*"\(relp\|avro\)":true,"window":\([0-9]*\),"acknowledged":\([0-9]*\),"ack_p50_ms":\([0-9.e+-]*\),"ack_p99_ms":\([0-9.e+-]*\).*/\2,\3,\4,\5/p' \
      "$dir/sent.json" | awk -F, -v v="$variant" -v n="$n" -v s="$seconds" \
      '{ printf "%s,%d,%d,%d,%.0f,%.2f,%.2f\n", v, n, $1, $2, $2 / s, $3, $4 }' >> "$out/acks.csv"
    tail -1 "$out/acks.csv" >&2
  fi
}

summarize() {  # medians per variant, the ratio against rsyslog measured in the same run, the plot
  local out=$1 variants
  variants=$(tail -n +2 "$out/runs.csv" | cut -d, -f1 | awk '!seen[$0]++' | tr '\n' ' ')
{
  echo "| variant | stored events/s | sent events/s | loss | of it counted by the agent | agent CPU-s per million | agent cores | broker cores | sender cores | agent peak RSS MB | latency p50 ms | latency p99 ms | slowest second from the 5th, events/s (of all runs) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for variant in $variants; do
    grep "^$variant," "$out/runs.csv" | sort -t, -k6 -n | awk -F, -v v="$variant" '{ r[NR] = $0
        if ($16 ~ /^[0-9]+$/ && (slowest == "" || $16 + 0 < slowest)) slowest = $16 + 0 } END {
      split(r[int((NR + 1) / 2)], m, ",")
      printf "| %s | %d | %d | %d | %s | %.3f | %.2f | %.2f | %.2f | %d | %s | %s | %s |\n", v, m[6], m[7], m[5], m[13] == "" ? "-" : m[13],
             m[8], m[9], m[10], m[12], m[11], m[14] == "" ? "-" : m[14], m[15] == "" ? "-" : m[15], slowest == "" ? "-" : slowest }'
  done
} | tee "$out/summary.md"
if [ -s "$out/acks.csv" ]; then  # RELP: acknowledged events/s and the ack latency, medians
  {
    echo
    echo "| variant | window | acknowledged events/s | ack latency p50 ms | p99 ms |"
    echo "|---|---|---|---|---|"
    for variant in $(cut -d, -f1 "$out/acks.csv" | awk '!seen[$0]++'); do
      grep "^$variant," "$out/acks.csv" | awk -F, -v v="$variant" '{ a[NR] = $5; p[NR] = $6; q[NR] = $7; w = $3 }
        function median(x, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
          return x[int((n + 1) / 2)] }
        END { printf "| %s | %d | %.0f | %.2f | %.2f |\n", v, w, median(a, NR), median(p, NR), median(q, NR) }'
    done
  } | tee -a "$out/summary.md"
fi
# Ratios measured in the same run: Sluice's kafka variant against each peer.
for peer in rsyslog syslog-ng flume; do
  if grep -q "^$peer," "$out/runs.csv" && grep -q "^kafka," "$out/runs.csv"; then
    awk -F'|' -v p=" $peer " '$2 == " kafka " {k = $3; kc = $7} $2 == p {r = $3; rc = $7} END {
      if (r > 0 && rc > 0) printf "\nsluice (kafka) / %s: %.2fx the stored events/s, %.2fx the CPU per event\n", p, k / r, kc / rc }' \
      "$out/summary.md" | tee -a "$out/summary.md"
  fi
done

# Flume's tier 2: Sluice's Avro source against Flume's, measured in the same run.
if grep -q "^avro," "$out/runs.csv" && grep -q "^flume-avro," "$out/runs.csv"; then
  # (the first table's rows: the acks table below it names the same variants)
  awk -F'|' '$2 == " avro " && !k {k = $3; kc = $7} $2 == " flume-avro " && !r {r = $3; rc = $7} END {
    if (r > 0 && rc > 0) printf "\nsluice (avro) / flume (flume-avro): %.2fx the stored events/s, %.2fx the CPU per event\n", k / r, kc / rc }' \
    "$out/summary.md" | tee -a "$out/summary.md"
fi

# Over UDP: Sluice's udp variant against rsyslog's imudp, measured in the same run.
if grep -q "^udp," "$out/runs.csv" && grep -q "^rsyslog-udp," "$out/runs.csv"; then
  awk -F'|' '$2 == " udp " {k = $3; kc = $7} $2 == " rsyslog-udp " {r = $3; rc = $7} END {
    if (r > 0 && rc > 0) printf "\nsluice (udp) / rsyslog (imudp): %.2fx the stored events/s, %.2fx the CPU per event\n", k / r, kc / rc }' \
    "$out/summary.md" | tee -a "$out/summary.md"
fi

# Against the reference build, measured in the same run: each variant V over V@ref.
for variant in $variants; do
  [[ $variant == *@ref ]] || continue
  # (the first table's rows: the acks table below it names RELP's and Avro's variants again)
  awk -F'|' -v v=" ${variant%@ref} " -v r=" $variant " -v name="${variant%@ref}" '$2 == v && !k {k = $3; kc = $7} $2 == r && !b {b = $3; bc = $7} END {
    if (b > 0 && bc > 0) printf "\n%s / reference: %.3fx the stored events/s, %.3fx the CPU per event\n", name, k / b, kc / bc }' \
    "$out/summary.md" | tee -a "$out/summary.md"
done

# A plot of Kafka's stored rate per second, one line per run.
plots=()
for f in "$out"/*/offsets.csv; do [ -s "$f" ] && plots+=("'$f' using 1:3 with lines title '$(basename "$(dirname "$f")")'"); done
if [ ${#plots[@]} -gt 0 ] && command -v gnuplot >/dev/null; then
  gnuplot -e "set terminal png size 1000,500; set output '$out/rates.png'; set datafile separator ','; \
    set key outside; set xlabel 'seconds'; set ylabel 'events/s stored in Kafka'; set yrange [0:*]; \
    plot $(IFS=,; echo "${plots[*]}")" && echo "plot: $out/rates.png" >&2
fi
}

if [ -n "$summarize_only" ]; then summarize "$(cd "$summarize_only" && pwd)"; exit 0; fi

# Metric families by their constant in the agent's own table (sluice --print-metric-names): no
# name is spelled here, so a renamed family stops the benchmark rather than reading nothing.
metric_table=$("$bin/sluice" --print-metric-names) ||
  { echo "bench: $bin/sluice has no --print-metric-names: rebuild it (bash .ci/build)" >&2; exit 1; }
metric() {
  awk -F'\t' -v c="$1" '$1 == c {print $2; found = 1} END {exit !found}' <<<"$metric_table" ||
    { echo "bench: the agent exports no metric $1" >&2; return 1; }
}
# Each one this script reads, resolved once (a failed assignment stops the script under set -e).
latency_family=$(metric kPipelineLatencySeconds)
truncated_family=$(metric kSourceFramesTruncatedTotal)
udp_drop_families=()
for constant in kSourceUdpKernelDropsTotal kSourceDatagramsUnreadAtShutdownTotal kSourceEventsDroppedAtShutdownTotal; do
  family=$(metric "$constant")
  udp_drop_families+=("$family")
done
mkdir -p "$out" && out=$(cd "$out" && pwd)
[ "$kafka" = mock ] || start_real_kafka
case " $variants " in *" tls"*)  # a CA and the agent's certificate for the tls variant
  mkdir -p "$out/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=bench CA" \
    -keyout "$out/tls/ca.key" -out "$out/tls/ca.pem" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
    -keyout "$out/tls/server.key" -out "$out/tls/server.csr" 2>/dev/null
  openssl x509 -req -in "$out/tls/server.csr" -CA "$out/tls/ca.pem" -CAkey "$out/tls/ca.key" -CAcreateserial -days 2 \
    -extfile <(printf "subjectAltName=IP:127.0.0.1") -out "$out/tls/server.pem" 2>/dev/null ;;
esac
echo "variant,run,sent,stored,loss,stored_per_s,sent_per_s,agent_cpu_s_per_million,agent_cores,broker_cores,agent_peak_rss_mb,sender_cores,counted_drops,latency_p50_ms,latency_p99_ms,slowest_second_from_5th" > "$out/runs.csv"
echo "bench: ${runs} x ${duration}s per variant (${variants}), ${connections} connections, rate ${rate} (0 = max), ${size} B per event, ${partitions:-10} partitions, acks ${acks_override:-per variant}, $channel channel, broker: $kafka; results in $out" >&2
for n in $(seq 1 "$runs"); do
  for variant in $variants; do one_run "$variant" "$n"; done   # interleaved: noise hits every variant alike
done

summarize "$out"
