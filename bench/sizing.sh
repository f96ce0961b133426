#!/usr/bin/env bash
# Sizing sweeps: how throughput, CPU, memory and the pipeline latency change with event size,
# connections, partitions, acks and the channel, each a table and a plot, and a sizing rule
# fitted on them with its error against a run it was not fitted on.
#
#   bash bench/sizing.sh [--duration 5s] [--runs 3] [--kafka mock|real]
#                        [--sweeps "size connections partitions acks channel"]
#                        [--out DIR --points "sweep=value ..."]   # measure these again into DIR
#   bash bench/sizing.sh --summarize bench/results/sizing-<time>   # tables, plots, rule again
#
# Each point is the benchmark's kafka variant (bench/run.sh: the seed's shape, ten sinks, acks=0)
# with one knob changed. Per point, three measurements of --runs runs each (medians):
#   max   the sender as fast as it can (connections sweep: at 1,000,000 events/s, its target);
#         stored events/s from the broker's offsets, MB/s, agent CPU-s per million, peak RSS;
#   50%   the sender at half the max just measured: pipeline latency p50/p99
#   90%   and at 90% of it.
# Latency is sluice_pipeline_latency_seconds of the whole run (arrival to commit; with acks=0
# commit is librdkafka taking the batch, with acks >= 1 Kafka's acknowledgement).
# The rule: CPU-s per million = a + b * size (fitted on the size sweep, acks=0), times the acks
# sweep's factor for acks 1 or all; checked against a run of 1,024-byte events with acks=1.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=5 runs=3 kafka=mock sweeps="size connections partitions acks channel" summarize_only="" out="" points=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=${2%s}; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --kafka) kafka=$2; shift 2 ;;
    --sweeps) sweeps=$2; shift 2 ;;
    --summarize) summarize_only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2 ;;
  esac
done

values_of() {
  case "$1" in
    size) echo "120 512 2048 8192" ;;
    connections) echo "4 100 1000 10000" ;;
    partitions) echo "1 10 100" ;;
    acks) echo "0 1 all" ;;
    channel) echo "memory spillable" ;;
    validation) echo "1024-acks1" ;;
    *) echo "sizing: no sweep $1 (size connections partitions acks channel)" >&2; exit 2 ;;
  esac
}
knobs_of() {  # $1 sweep $2 value: bench/run.sh options
  case "$1" in
    size) echo "--size $2" ;;
    connections) echo "--connections $2" ;;
    partitions) echo "--partitions $2" ;;
    acks) echo "--acks $2" ;;
    channel) echo "--channel $2" ;;
    validation) echo "--size 1024 --acks 1" ;;
  esac
}
size_of() { case "$1:$2" in size:*) echo "$2" ;; validation:*) echo 1024 ;; *) echo 120 ;; esac; }

# The kafka row of a run's summary: stored/s, CPU-s per million, peak RSS, latency p50, p99.
kafka_row() { awk -F'|' '$2 == " kafka " { gsub(/ /, ""); print $3, $7, $11, $12, $13 }' "$1/summary.md"; }

measure() {  # $1 sweep $2 value → a row of $out/sizing.csv
  local sweep=$1 value=$2 dir="$out/$1-$2" knobs max_rate=0 size
  read -r -a knobs <<<"$(knobs_of "$sweep" "$value")"
  size=$(size_of "$sweep" "$value")
  [ "$sweep" != connections ] || max_rate=1000000
  bash bench/run.sh --variants kafka --runs "$runs" --duration "${duration}s" --kafka "$kafka" --rate "$max_rate" \
    "${knobs[@]}" --out "$dir/max" >"$dir.log" 2>&1 || { tail -20 "$dir.log" >&2; exit 1; }
  local rate cpu rss p50 p99
  read -r rate cpu rss p50 p99 <<<"$(kafka_row "$dir/max")"
  [[ ${rate:-} =~ ^[0-9]+$ ]] && [ "$rate" -gt 0 ] || { echo "sizing: no kafka row in $dir/max/summary.md" >&2; exit 1; }
  local r50=$((rate / 2)) r90=$((rate * 9 / 10)) at50 at90
  bash bench/run.sh --variants kafka --runs "$runs" --duration "${duration}s" --kafka "$kafka" --rate "$r50" \
    "${knobs[@]}" --out "$dir/at50" >>"$dir.log" 2>&1 || { tail -20 "$dir.log" >&2; exit 1; }
  bash bench/run.sh --variants kafka --runs "$runs" --duration "${duration}s" --kafka "$kafka" --rate "$r90" \
    "${knobs[@]}" --out "$dir/at90" >>"$dir.log" 2>&1 || { tail -20 "$dir.log" >&2; exit 1; }
  at50=$(kafka_row "$dir/at50" | awk '{print $4 "," $5}')
  at90=$(kafka_row "$dir/at90" | awk '{print $4 "," $5}')
  echo "$sweep,$value,$size,$max_rate,$rate,$(awk -v r="$rate" -v s="$size" 'BEGIN {printf "%.1f", r * s / 1e6}'),$cpu,$rss,$p50,$p99,$r50,$at50,$r90,$at90" \
    | tee -a "$out/sizing.csv" >&2
}

summarize() {
  local out=$1 sweep
  {
    echo "Measured $(head -1 "$out/conditions.txt" 2>/dev/null)"
    for sweep in $(cut -d, -f1 "$out/sizing.csv" | tail -n +2 | awk '!seen[$0]++'); do
      [ "$sweep" != validation ] || continue
      echo
      echo "**$sweep**"
      echo
      echo "| $sweep | stored events/s | MB/s | agent CPU-s per million | peak RSS MB | at 50%: latency p50 / p99 ms | at 90%: latency p50 / p99 ms |"
      echo "|---|---|---|---|---|---|---|"
      awk -F, -v s="$sweep" '$1 == s {
        printf "| %s | %s%s | %s | %s | %s | %s / %s | %s / %s |\n", $2, $5, ($4 > 0 ? " (sent at " $4 ")" : ""), $6, $7, $8,
               $12, $13, $15, $16 }' "$out/sizing.csv"
    done
  } >"$out/sizing.md"
  # One plot per sweep: events/s, CPU per million, latency p99 at 50% and 90% of the max.
  if command -v gnuplot >/dev/null; then
    for sweep in $(cut -d, -f1 "$out/sizing.csv" | tail -n +2 | awk '!seen[$0]++'); do
      [ "$sweep" != validation ] || continue
      grep "^$sweep," "$out/sizing.csv" >"$out/$sweep.dat"
      gnuplot -e "set terminal png size 1200,360; set output '$out/sizing-$sweep.png'; set datafile separator ','; \
        set multiplot layout 1,3 title 'sizing: $sweep (mock broker unless said; medians of $(sed -n 2p "$out/conditions.txt" 2>/dev/null))'; \
        set style fill solid 0.6; set boxwidth 0.6; set yrange [0:*]; set xlabel '$sweep'; unset key; \
        set ylabel 'events/s stored'; plot '$out/$sweep.dat' using 0:5:xtic(2) with boxes lc rgb '#3070b0'; \
        set ylabel 'agent CPU-s per million'; plot '$out/$sweep.dat' using 0:7:xtic(2) with boxes lc rgb '#b07030'; \
        set ylabel 'latency p99 ms'; set key top left; \
        plot '$out/$sweep.dat' using (\$0-0.15):13:xtic(2) with boxes title 'at 50%' lc rgb '#60a060' , \
             '' using (\$0+0.15):16 with boxes title 'at 90%' lc rgb '#a04040'; \
        unset multiplot" && echo "plot: $out/sizing-$sweep.png" >&2
    done
  fi
  rule "$out" | tee -a "$out/sizing.md"
  cat "$out/sizing.md"
}

# The rule, fitted on the size and acks sweeps; its error on the validation run.
rule() {
  awk -F, '
    $1 == "size" { n++; x[n] = $3; y[n] = $7 }
    $1 == "acks" { acks[$2] = $7 }
    $1 == "validation" { vcpu = $7; vsize = $3 }
    END {
      if (n < 2) exit
      for (i = 1; i <= n; i++) { sx += x[i]; sy += y[i]; sxx += x[i] * x[i]; sxy += x[i] * y[i] }
      b = (n * sxy - sx * sy) / (n * sxx - sx * sx); a = (sy - b * sx) / n
      printf "\n**Sizing rule** (fitted here): agent CPU-s per million events = %.3f + %.5f x bytes per event", a, b
      if (acks["0"] > 0 && acks["1"] > 0) printf "; x %.2f with acks=1, x %.2f with acks=all", acks["1"] / acks["0"], acks["all"] / acks["0"]
      printf ".\n"
      if (vcpu > 0 && acks["0"] > 0) {
        predicted = (a + b * vsize) * acks["1"] / acks["0"]
        printf "Checked on a run it was not fitted on (%d-byte events, acks=1): predicted %.3f, measured %.3f CPU-s per million (%+.0f%%).\n", vsize, predicted, vcpu, (predicted - vcpu) / vcpu * 100
      }
    }' "$1/sizing.csv"
}

if [ -n "$summarize_only" ]; then summarize "$(cd "$summarize_only" && pwd)"; exit 0; fi
[ -x build/bin/sluice ] || bash .ci/build
[ -n "$out" ] || out="$PWD/bench/results/sizing-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out" && out=$(cd "$out" && pwd)
if [ -n "$points" ] && [ -s "$out/sizing.csv" ]; then  # these points again; the others' rows stay
  for point in $points; do
    awk -F, -v s="${point%%=*}" -v v="${point#*=}" '!($1 == s && $2 == v)' "$out/sizing.csv" >"$out/sizing.csv.new"
    mv "$out/sizing.csv.new" "$out/sizing.csv"
  done
  for point in $points; do measure "${point%%=*}" "${point#*=}"; done
  summarize "$out"
  exit 0
fi
echo "sweep,value,size_bytes,target_rate,stored_per_s,mb_per_s,agent_cpu_s_per_million,agent_peak_rss_mb,max_p50_ms,max_p99_ms,rate_50,p50_ms_at_50,p99_ms_at_50,rate_90,p50_ms_at_90,p99_ms_at_90" >"$out/sizing.csv"
{
  echo "on $(nproc) cores, $(date -u +%Y-%m-%d), broker: $kafka, ${duration} s per run"
  echo "$runs runs"
} >"$out/conditions.txt"
echo "sizing: sweeps $sweeps (and the validation run), $runs x ${duration}s per measurement; results in $out" >&2
for sweep in $sweeps validation; do
  for value in $(values_of "$sweep"); do measure "$sweep" "$value"; done
done
summarize "$out"
