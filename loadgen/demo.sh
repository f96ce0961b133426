#!/usr/bin/env bash
# The main job, end to end on this machine: install what is missing, build, start the agent
# on conf/agent.properties (the seed's configuration, its Kafka embedded in the agent), drive
# it with sluice-loadgen, then read the topic back and print what landed in Kafka.
#
#   bash loadgen/demo.sh [--rate EVENTS_PER_S] [--duration 5s] [--connections 8]
set -euo pipefail
cd "$(dirname "$0")/.."
rate=200000 duration=5s connections=8
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) rate=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    *) echo "usage: $0 [--rate N] [--duration D] [--connections N]" >&2; exit 2 ;;
  esac
done

# Only what it runs: the agent (its Kafka embedded) and the load generator; the test command
# builds the rest.
bash .ci/install-deps
bash .ci/configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2 --target sluice sluice-loadgen
work=$(mktemp -d)
agent_pid=""
cleanup() {
  if [ -n "$agent_pid" ] && kill -0 "$agent_pid" 2>/dev/null; then kill -TERM "$agent_pid"; wait "$agent_pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

build/bin/sluice -f conf/agent.properties -n tier2 --ready-file "$work/ready" --status-interval 1s \
  >"$work/agent.log" 2>&1 &
agent_pid=$!
for _ in $(seq 100); do [ -s "$work/ready" ] && break; sleep 0.1; done
if [ ! -s "$work/ready" ]; then cat "$work/agent.log"; echo "the agent did not start" >&2; exit 1; fi
bootstrap=$(sed -n 's/^embedded.bootstrap=//p' "$work/ready")
targets=()
for port in $(sed -n 's/^source.r1.ports=//p' "$work/ready"); do targets+=(-t "127.0.0.1:$port"); done
echo "== agent pid $agent_pid; embedded Kafka at $bootstrap (try: kcat -b $bootstrap -C -t ApacheLog -c 3)"

echo "== sending ${rate} events/s for ${duration} over ${connections} connections"
build/bin/sluice-loadgen "${targets[@]}" -c "$connections" -r "$rate" -d "$duration" --summary-json "$work/sent.json"

echo "== reading topic ApacheLog back from Kafka"
status=0
build/bin/sluice-loadgen --verify --bootstrap "$bootstrap" --topic ApacheLog --expect "$work/sent.json" --idle 1500ms || status=$?

echo "== agent status lines"
grep -E "status:" "$work/agent.log" | grep -v "in 0 ev/s" | tail -n 8
kill -TERM "$agent_pid"; wait "$agent_pid" || status=$?
agent_pid=""
grep -E "stopped:" "$work/agent.log"
exit $status
