#!/usr/bin/env bash
# Reproduces BENCHMARKS.md's cache-tier figures: the tiered-system-prompts workload (working set
# 4x the pool) with the tiers off, host memory, and disk; then a known 1,000-token prompt's
# first-request latency after a restart with the disk tier (warm) against one without (cold).
# One server at a time on a loopback port; JSON and text go to OUT (default bench-out/tiers).
#   ./mvnw -B -ntp -q -DskipTests package && server/bench-tiers.sh [OUT] [REQUESTS]
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/java-home.sh
JAR=server/target/radixserve.jar
OUT=${1:-bench-out/tiers}
REQUESTS=${2:-192}
PORT=8130
POOL=960   # blocks of 16: 15,360 tokens, a quarter of the 64 x 1,000-token working set
mkdir -p "$OUT"
DIR=$(mktemp -d /tmp/radixserve-tiers.XXXXXX)
pid=
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi; }
trap 'stop; rm -rf "$DIR"' EXIT
serve() {  # serve NAME ARGS...
  local name=$1; shift
  java --add-modules jdk.incubator.vector -jar "$JAR" serve --host 127.0.0.1 --port $PORT \
    --num-blocks $POOL "$@" >> "$OUT/$name.log" 2>&1 & pid=$!
  for _ in $(seq 240); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && return; sleep 0.5; done
  echo "server $name did not start" >&2; exit 1
}
# 1. the workload with each tier setting
for mode in off host disk; do
  case $mode in
    off) serve $mode ;;
    host) serve $mode --kv-offload-memory 1g ;;
    disk) rm -rf "$DIR/disk"; serve $mode --kv-offload-dir "$DIR/disk" --kv-offload-disk-size 2g ;;
  esac
  java --add-modules jdk.incubator.vector -jar "$JAR" bench --url "http://127.0.0.1:$PORT" \
    --workload tiered-system-prompts --num-requests "$REQUESTS" --max-tokens 8 --seed 0 \
    --concurrency 4 --warmup 4 --quiet --output "$OUT/$mode.json" | tee "$OUT/$mode.txt"
  curl -s "http://127.0.0.1:$PORT/metrics" | grep '^radixserve_kv_tier' > "$OUT/$mode.metrics" || true
  stop
done
# 2. no reuse at all: what offloading costs when nothing comes back (128 x 256-token prompts,
#    twice the pool)
for mode in off host disk; do
  case $mode in
    off) serve unique-$mode ;;
    host) serve unique-$mode --kv-offload-memory 1g ;;
    disk) rm -rf "$DIR/disk"; serve unique-$mode --kv-offload-dir "$DIR/disk" --kv-offload-disk-size 2g ;;
  esac
  java --add-modules jdk.incubator.vector -jar "$JAR" bench --url "http://127.0.0.1:$PORT" \
    --workload unique --num-requests 128 --max-tokens 8 --seed 0 --concurrency 4 --warmup 4 \
    --quiet --output "$OUT/unique-$mode.json" | tee "$OUT/unique-$mode.txt"
  stop
done
# 3. first request of a known 1,000-token prompt after a restart: cold (no tier) vs warm (disk)
python3 -c 'import json,random; r=random.Random(7); print(json.dumps({"model":"radixserve-embedded-gpt2","prompt":[r.randrange(50256) for _ in range(1000)],"max_tokens":1,"temperature":0}))' > "$DIR/known.json"
first() {  # seconds to the (only) token of the known prompt
  curl -s -o /dev/null -w '%{time_total}\n' -H 'Content-Type: application/json' \
    --data @"$DIR/known.json" "http://127.0.0.1:$PORT/v1/completions"
}
: > "$OUT/restart.txt"
for i in 1 2 3; do
  serve restart-cold; echo "cold $(first)" | tee -a "$OUT/restart.txt"; stop
  rm -rf "$DIR/warm"
  serve restart-warm --kv-offload-dir "$DIR/warm"; first > /dev/null; stop   # writes it at shutdown
  serve restart-warm --kv-offload-dir "$DIR/warm"; echo "warm $(first)" | tee -a "$OUT/restart.txt"; stop
done
