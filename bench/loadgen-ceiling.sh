#!/usr/bin/env bash
# The load generator's own ceiling: sluice-loadgen and syslog-ng's loggen, each against a
# discard receiver (sluice-loadgen --receive), alternating, several runs, medians.
#
#   bash bench/loadgen-ceiling.sh [--duration 10] [--runs 3] [--connections 4]
#
# Events are 128 bytes for both: loggen sends no newline with --size under 127.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=10 runs=3 connections=4
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=${2%s}; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    *) sed -n '2,8p' "$0"; exit 2 ;;
  esac
done
bash .ci/install-deps syslog-ng-core
[ -x build/bin/sluice-loadgen ] || bash .ci/build
out="$PWD/bench/results/loadgen-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
echo "sender,run,events_per_s,cpu_s_per_million,cores" > "$out/runs.csv"

# Runs "$@" as the sender against a fresh receiver; appends its row.
one() {
  local name=$1 n=$2; shift 2
  build/bin/sluice-loadgen --receive 0 -d "$((duration + 3))s" -q >"$out/$name-$n.json" 2>"$out/$name-$n.receiver" &
  local receiver=$!
  for _ in $(seq 100); do grep -q listening "$out/$name-$n.receiver" 2>/dev/null && break; sleep 0.05; done
  local port; port=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$out/$name-$n.receiver")
  local start; start=$(date +%s.%N)
  local times; times=$( { /usr/bin/env TIMEFORMAT='%U %S' bash -c "time $(printf '%q ' "$@" | sed "s/PORT/$port/g") >/dev/null 2>&1"; } 2>&1 | tail -1)
  local end; end=$(date +%s.%N)
  wait "$receiver"
  local received; received=$(sed -n 's/.*"received":\([0-9]*\).*/\1/p' "$out/$name-$n.json")
  awk -v name="$name" -v n="$n" -v r="$received" -v t0="$start" -v t1="$end" -v cpu="$times" 'BEGIN {
    split(cpu, c, " "); s = t1 - t0; cpus = c[1] + c[2]
    printf "%s,%d,%.0f,%.3f,%.2f\n", name, n, r / s, cpus / (r / 1e6), cpus / s }' | tee -a "$out/runs.csv"
}

for n in $(seq "$runs"); do
  one sluice-loadgen "$n" build/bin/sluice-loadgen -t 127.0.0.1:PORT -c "$connections" -s 128 -r 0 -d "${duration}s" -q
  one loggen "$n" loggen --inet --stream --size 128 --rate 10000000 --interval "$duration" \
    --active-connections "$connections" 127.0.0.1 PORT
done
{
  echo "| sender | events/s | CPU-s per million | cores |"
  echo "|---|---|---|---|"
  for name in sluice-loadgen loggen; do
    grep "^$name," "$out/runs.csv" | sort -t, -k3 -n | awk -F, '{ r[NR] = $0 } END { split(r[int((NR + 1) / 2)], m, ",");
      printf "| %s | %d | %.3f | %.2f |\n", m[1], m[3], m[4], m[5] }'
  done
} | tee "$out/summary.md"
