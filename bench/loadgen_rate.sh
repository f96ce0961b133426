#!/bin/bash
# How closely sluice-loadgen keeps the rate it is asked for: sent against rate x duration, at
# 1,000 and 200,000 events/s over 2 connections into its own discard receiver (no agent).
# A timing measurement, so it lives here and not in CTest; median of --runs.
#
#   bash bench/loadgen_rate.sh [--build DIR] [--runs N] [--duration 2s]   (whole seconds)
set -euo pipefail
BUILD=build RUNS=3 DURATION=2
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --duration) DURATION=${2%s}; shift 2 ;;
    *) echo "unknown option $1 (--build DIR, --runs N, --duration Ns)" >&2; exit 2 ;;
  esac
done
LOADGEN=$BUILD/bin/sluice-loadgen
[ -x "$LOADGEN" ] || { echo "no $LOADGEN: build first (cmake --build $BUILD -j2)" >&2; exit 2; }
WORK=$(mktemp -d); RECEIVER=
cleanup() { [ -z "$RECEIVER" ] || kill "$RECEIVER" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

printf "%10s %6s %12s %12s %9s\n" rate runs expected sent_median error
status=0
for rate in 1000 200000; do
  errors=()
  for run in $(seq "$RUNS"); do
    # The receiver outlives the send by a few seconds, then prints what it counted.
    "$LOADGEN" --receive 0 --duration $((DURATION + 5))s --quiet >"$WORK/received" 2>"$WORK/receiver.log" &
    RECEIVER=$!
    port=
    for _ in $(seq 100); do
      port=$(grep -o '127.0.0.1:[0-9]*' "$WORK/receiver.log" 2>/dev/null | head -1 | cut -d: -f2 || true)
      [ -n "$port" ] && break
      sleep 0.05
    done
    [ -n "$port" ] || { echo "the receiver did not start: $(cat "$WORK/receiver.log")" >&2; exit 1; }
    "$LOADGEN" -t "127.0.0.1:$port" -c 2 -r "$rate" -d "${DURATION}s" --json --quiet >"$WORK/sent" 2>"$WORK/sender.log" ||
      { echo "rate $rate run $run: the sender failed: $(cat "$WORK/sender.log")" >&2; exit 1; }
    wait "$RECEIVER" || { echo "rate $rate run $run: the receiver failed: $(cat "$WORK/receiver.log")" >&2; exit 1; }
    RECEIVER=
    sent=$(grep -o '"sent":[0-9]*' "$WORK/sent" | head -1 | cut -d: -f2 || true)
    received=$(grep -o '"received":[0-9]*' "$WORK/received" | cut -d: -f2 || true)
    [ -n "$sent" ] && [ -n "$received" ] ||
      { echo "rate $rate run $run: no count in the sender's or the receiver's output" >&2; exit 1; }
    [ "$sent" = "$received" ] || { echo "rate $rate run $run: sent $sent but received $received" >&2; status=1; }
    errors+=("$(awk -v s="$sent" -v r="$rate" -v d="$DURATION" 'BEGIN {printf "%.4f", 100 * (s - r * d) / (r * d)}')")
    echo "$sent" >>"$WORK/sent-$rate"
  done
  expected=$((rate * DURATION))
  error=$(printf "%s\n" "${errors[@]}" | median)
  printf "%10s %6s %12s %12s %8s%%\n" "$rate" "$RUNS" "$expected" "$(median <"$WORK/sent-$rate")" "$error"
  awk -v e="$error" 'BEGIN {exit (e < -2 || e > 2)}' || { echo "rate $rate: median error $error% is beyond 2%" >&2; status=1; }
done
exit $status
