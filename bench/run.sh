#!/usr/bin/env bash
# The benchmark: the whole pipeline on this machine for a fixed duration, several runs, medians.
#
#   bash bench/run.sh --summarize bench/results/<time>   # medians and plot of an earlier run
#   bash bench/run.sh [--duration 30s] [--runs 3] [--rate 0] [--connections 4]
#                     [--variants "kafka kafka-shared kafka-scraped null acks-all ramp rsyslog"]
#
# Variants: kafka (the seed's shape and settings: 10 sinks, acks=0, snappy, one producer each),
# kafka-shared (the 10 sinks share one librdkafka producer), kafka-scraped (metrics endpoint on, both
# endpoints scraped every second), null (sinks discard: the agent's own cost),
# acks-all (acks=all, linger 5 ms), ramp (the sender rises to --rate over a third of the run),
# rsyslog (the tuned peer from ../shared/peers on the same load and broker).
#
# Per run: sluice-kafka-mock (its own process) ← agent (or a peer) ← sluice-loadgen. Reports events/s
# stored in Kafka (from the broker's offsets, not the agent's counters), the sender's rate, loss
# (sent - stored), agent CPU-seconds per million events (user+sys from /proc), agent peak RSS, and
# the CPU of broker and sender. Per-second CSVs and a PNG plot land in bench/results/<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=30 runs=3 rate=0 connections=4 variants="kafka null rsyslog" summarize_only="" sink_properties=()
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=${2%s}; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --sink-property) sink_properties+=("$2"); shift 2 ;;
    --summarize) summarize_only=$2; shift 2 ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
  esac
done

bash .ci/install-deps gnuplot-nox
[ -x build/bin/sluice ] || bash .ci/build
out="$PWD/bench/results/$(date +%Y%m%d-%H%M%S)"
tick=$(getconf CLK_TCK)
bin=build/bin

cpu_seconds() { awk -v t="$tick" '{print ($14+$15)/t}' "/proc/$1/stat"; }
peak_rss_mb() { awk '/VmHWM/{printf "%.0f", $2/1024}' "/proc/$1/status"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
              echo $((20000 + RANDOM % 20000)); }
wait_file() { for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }
stop_pid() { kill -TERM "$1" 2>/dev/null || true; for _ in $(seq 300); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; kill -KILL "$1" 2>/dev/null || true; }

start_rsyslog() {  # $1 port $2 bootstrap $3 workdir; prints the pid
  local root=$PWD/build/peers/rsyslog
  if [ ! -x "$root/usr/sbin/rsyslogd" ]; then
    bash .ci/install-deps libestr0 libfastjson4 liblognorm5 >&2
    mkdir -p "$root/debs"
    (cd "$root/debs" && apt-get download rsyslog rsyslog-kafka >/dev/null 2>&1)
    for deb in "$root"/debs/*.deb; do dpkg -x "$deb" "$root"; done
  fi
  # The tuned peer configuration from ../shared/peers (beside the project root).
  sed -e "s|{port}|$1|; s|{bootstrap}|$2|; s|{workdir}|$3|g; s|{topic}|ApacheLog|" \
    ../shared/peers/rsyslog-omkafka.conf.in > "$3/rsyslog.conf"
  "$root/usr/sbin/rsyslogd" -n -f "$3/rsyslog.conf" -i "$3/rsyslog.pid" -M "$root/usr/lib/x86_64-linux-gnu/rsyslog" \
    >"$3/agent.log" 2>&1 &
  echo $!
}

one_run() {  # $1 variant $2 run number → appends a row to $out/runs.csv
  local variant=$1 n=$2 dir="$out/$1-$2"
  mkdir -p "$dir"
  "$bin/sluice-kafka-mock" --topic ApacheLog --partitions 10 --bootstrap-file "$dir/bootstrap" >"$dir/broker.log" 2>&1 &
  local broker=$!
  wait_file "$dir/bootstrap"
  local bootstrap; bootstrap=$(head -1 "$dir/bootstrap")
  local agent targets=() sink_type=com.igloosec.KafkaSink acks=0 linger=500 ramp=() share=false metrics=() scraper=
  local idempotence=false
  case "$variant" in
    null) sink_type=null ;;
    acks-all) acks=all linger=5 ;;
    acks-all-seed) acks=all idempotence=true ;;
    kafka-shared) share=true ;;
    kafka-scraped) metrics=(--metrics 127.0.0.1:0) ;;
    ramp) [ "$rate" != 0 ] || { echo "the ramp variant needs --rate" >&2; exit 2; }
          ramp=(--ramp "$((duration / 3))s") ;;
  esac
  if [ "$variant" = rsyslog ]; then
    local port; port=$(free_port)
    agent=$(start_rsyslog "$port" "$bootstrap" "$dir")
    targets=(-t "127.0.0.1:$port")
    sleep 1
  else
    {
      sed -e "s|{ports}|0 0|" bench/sluice-seed.properties.in
      for k in $(seq 1 10); do
        echo "tier2.sinks.kk$k.channel = c1"
        echo "tier2.sinks.kk$k.type = $sink_type"
        if [ "$sink_type" != null ]; then
          echo "tier2.sinks.kk$k.topic = ApacheLog"
          echo "tier2.sinks.kk$k.brokerList = $bootstrap"
          echo "tier2.sinks.kk$k.key = $((k - 1))"
          echo "tier2.sinks.kk$k.shareProducer = $share"
          echo "tier2.sinks.kk$k.kafka.compression.codec = snappy"
          echo "tier2.sinks.kk$k.kafka.request.required.acks = $acks"
          echo "tier2.sinks.kk$k.kafka.send.buffer.bytes = 16777216"
          echo "tier2.sinks.kk$k.kafka.batch.num.messages = ${BENCH_BATCH:-500}"
          echo "tier2.sinks.kk$k.kafka.queue.buffering.max.ms = $linger"
          echo "tier2.sinks.kk$k.kafka.queue.buffering.max.messages = 50000"
          [ "$idempotence" = false ] || echo "tier2.sinks.kk$k.kafka.producer.enable.idempotence = true"
          for property in "${sink_properties[@]}"; do echo "tier2.sinks.kk$k.$property"; done
        fi
      done
    } > "$dir/agent.properties"
    "$bin/sluice" -f "$dir/agent.properties" -n tier2 --ready-file "$dir/ready" --status-interval 1s "${metrics[@]}" \
      >"$dir/agent.log" 2>&1 &
    agent=$!
    wait_file "$dir/ready" || { cat "$dir/agent.log"; exit 1; }
    if [ ${#metrics[@]} -gt 0 ]; then  # a Prometheus-like scraper: both endpoints once a second
      local mport; mport=$(sed -n 's/^metrics.port=//p' "$dir/ready")
      ( while kill -0 "$agent" 2>/dev/null; do
          for path in /metrics /metrics.json; do
            { exec 3<>"/dev/tcp/127.0.0.1/$mport" && printf 'GET %s HTTP/1.0\r\n\r\n' "$path" >&3 && cat <&3 >/dev/null; } 2>/dev/null || true
          done
          sleep 1
        done ) &
      scraper=$!
    fi
    for port in $(sed -n 's/^source.r1.ports=//p' "$dir/ready"); do targets+=(-t "127.0.0.1:$port"); done
  fi
  local cpu0 bcpu0; cpu0=$(cpu_seconds "$agent"); bcpu0=$(cpu_seconds "$broker")
  [ "$variant" = null ] || "$bin/sluice-loadgen" --watch-offsets --bootstrap "$bootstrap" -d "$((duration + 6))s" \
      --csv "$dir/offsets.csv" -q >/dev/null 2>&1 &
  local watcher=$!
  "$bin/sluice-loadgen" "${targets[@]}" -c "$connections" -r "$rate" -d "${duration}s" "${ramp[@]}" -q \
    --summary-json "$dir/sent.json" 2>"$dir/loadgen.log" || true
  if [ ! -s "$dir/sent.json" ]; then
    cat "$dir/loadgen.log" "$dir/agent.log" >&2
    stop_pid "$agent"; stop_pid "$broker"; kill "$watcher" 2>/dev/null || true
    echo "bench: run $variant-$n failed (above: the sender's and the agent's output)" >&2
    exit 1
  fi
  local sent seconds sender_cpu
  sent=$(sed -n 's/.*"sent":\([0-9]*\),"seconds".*/\1/p' "$dir/sent.json" | head -1)
  seconds=$(sed -n 's/.*"seconds":\([0-9.e+]*\),.*/\1/p' "$dir/sent.json" | head -1)
  sender_cpu=$(sed -n 's/.*"cpu_seconds":\([0-9.e+]*\),.*/\1/p' "$dir/sent.json" | head -1)
  local stored=0 previous=-1
  if [ "$variant" = null ]; then
    sleep 2
  else
    for _ in $(seq 60); do  # until the broker's offsets stop moving
      stored=$("$bin/sluice-loadgen" --offsets --bootstrap "$bootstrap")
      [ "$stored" = "$previous" ] && break
      previous=$stored; sleep 1
    done
  fi
  local cpu1 bcpu1 rss; cpu1=$(cpu_seconds "$agent"); bcpu1=$(cpu_seconds "$broker"); rss=$(peak_rss_mb "$agent")
  stop_pid "$agent"; wait "$agent" 2>/dev/null || true
  [ -z "$scraper" ] || { kill "$scraper" 2>/dev/null || true; wait "$scraper" 2>/dev/null || true; }
  kill "$watcher" 2>/dev/null || true; wait "$watcher" 2>/dev/null || true
  stop_pid "$broker"; wait "$broker" 2>/dev/null || true
  if [ "$variant" = null ]; then stored=$(sed -n 's/.* \([0-9]*\) sent,.*/\1/p' "$dir/agent.log" | tail -1); fi
  awk -v v="$variant" -v n="$n" -v sent="$sent" -v stored="$stored" -v s="$seconds" -v c0="$cpu0" -v c1="$cpu1" \
      -v b0="$bcpu0" -v b1="$bcpu1" -v rss="$rss" -v scpu="$sender_cpu" 'BEGIN {
    printf "%s,%d,%d,%d,%d,%.0f,%.0f,%.3f,%.2f,%.2f,%d,%.2f\n", v, n, sent, stored, sent - stored, stored / s, sent / s,
           (c1 - c0) / (stored / 1e6), (c1 - c0) / s, (b1 - b0) / s, rss, scpu / s }' >> "$out/runs.csv"
  tail -1 "$out/runs.csv" >&2
}

summarize() {  # medians per variant, the ratio against rsyslog measured in the same run, the plot
  local out=$1 variants
  variants=$(tail -n +2 "$out/runs.csv" | cut -d, -f1 | awk '!seen[$0]++' | tr '\n' ' ')
{
  echo "| variant | stored events/s | sent events/s | loss | agent CPU-s per million | agent cores | broker cores | sender cores | agent peak RSS MB |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for variant in $variants; do
    grep "^$variant," "$out/runs.csv" | sort -t, -k6 -n | awk -F, -v v="$variant" '{ r[NR] = $0 } END {
      split(r[int((NR + 1) / 2)], m, ",")
      printf "| %s | %d | %d | %d | %.3f | %.2f | %.2f | %.2f | %d |\n", v, m[6], m[7], m[5], m[8], m[9], m[10], m[12], m[11] }'
  done
} | tee "$out/summary.md"
if grep -q "^rsyslog," "$out/runs.csv" && grep -q "^kafka," "$out/runs.csv"; then
  awk -F'|' '$2 == " kafka " {k = $3} $2 == " rsyslog " {r = $3} END { if (r > 0) printf "\nsluice (kafka) / rsyslog, stored events/s: %.2fx\n", k / r }' \
    "$out/summary.md" | tee -a "$out/summary.md"
fi

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
mkdir -p "$out"
echo "variant,run,sent,stored,loss,stored_per_s,sent_per_s,agent_cpu_s_per_million,agent_cores,broker_cores,agent_peak_rss_mb,sender_cores" > "$out/runs.csv"
echo "bench: ${runs} x ${duration}s per variant (${variants}), ${connections} connections, rate ${rate} (0 = max); results in $out" >&2
for n in $(seq 1 "$runs"); do
  for variant in $variants; do one_run "$variant" "$n"; done   # interleaved: noise hits every variant alike
done

summarize "$out"
