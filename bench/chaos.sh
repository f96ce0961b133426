#!/usr/bin/env bash
# Chaos, longer than CI's 20 s: the e2e chaos test (tests/e2e/chaos_test.cc) with a steady load
# (acks=all, idempotence, spillablememory) while a seeded schedule takes the broker down and up
# and SIGTERMs and restarts the agent; the verifier's verdict for each run.
#
#   bash bench/chaos.sh [--duration 60s] [--runs 3] [--rate 5000] [--seed N]
#
# Each run draws its own seed unless --seed is given (then run i uses N + i); a failing seed
# is replayed exactly with --seed N --runs 1. The broker is librdkafka's mock, which keeps about
# 5 MiB per partition: keep duration x rate x 120 bytes / 10 partitions under that (the default
# 60 s at 5,000 events/s stores 3.6 MB per partition).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=60 runs=3 rate=5000 seed=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=${2%s}; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) sed -n '2,11p' "$0"; exit 2 ;;
  esac
done
[ -x build/bin/sluice-e2e-tests ] || bash .ci/build
out="$PWD/bench/results/chaos-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
failed=0
for i in $(seq 1 "$runs"); do
  run_seed=${seed:+$((seed + i - 1))}
  run_seed=${run_seed:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
  log="$out/run-$i-seed-$run_seed.log"
  if SLUICE_CHAOS_SECONDS=$duration SLUICE_CHAOS_RATE=$rate SLUICE_CHAOS_SEED=$run_seed \
       timeout $((duration + 300)) build/bin/sluice-e2e-tests "[chaos]" >"$log" 2>&1; then verdict=passed
  else verdict=FAILED; failed=$((failed + 1)); fi
  schedule=$(grep -m1 -o "[0-9]* outages, [0-9]* restarts" "$log" || echo "no schedule")
  summary=$(grep -m1 "^received" "$log" || echo "no verdict")
  echo "run $i, seed $run_seed: $verdict; $schedule; $summary" | tee -a "$out/summary.txt"
done
echo "chaos: $((runs - failed)) of $runs runs passed; logs in $out"
[ "$failed" -eq 0 ]
