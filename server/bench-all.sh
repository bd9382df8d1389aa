#!/usr/bin/env bash
# Reproduces docs/benchmarks/journal/2026-11-21-to-28.md's prefix-cache table: every workload, cache on vs off, one run each.
# Starts pairs of servers (prefix caching on / off) from the built jar on loopback ports, runs
# `bench`, writes JSON, text and PNG into OUT (default bench-out/), and stops the servers.
#   ./mvnw -B -ntp -q -DskipTests package && server/bench-all.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/java-home.sh
JAR=server/target/radixserve.jar
OUT=${1:-bench-out}
mkdir -p "$OUT"
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=(); }
trap stop EXIT
serve_pair() {  # serve_pair NAME ARGS...: cache on at :8100, off at :8101
  local name=$1; shift
  java --add-modules jdk.incubator.vector -jar "$JAR" serve --host 127.0.0.1 --port 8100 "$@" > "$OUT/$name-on.log" 2>&1 & pids+=($!)
  java --add-modules jdk.incubator.vector -jar "$JAR" serve --host 127.0.0.1 --port 8101 --prefix-caching=false "$@" > "$OUT/$name-off.log" 2>&1 & pids+=($!)
  for port in 8100 8101; do
    for _ in $(seq 120); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.5; done
  done
}
bench() {  # bench NAME ARGS...
  local name=$1; shift
  java --add-modules jdk.incubator.vector -jar "$JAR" bench --url http://127.0.0.1:8100 --compare-url http://127.0.0.1:8101 \
    --seed 0 --concurrency 8 --quiet --output "$OUT/$name.json" "$@" | tee "$OUT/$name.txt"
}
# 1. the application workloads and the published scenarios' structures, block 16, default pool
serve_pair main
bench main --workload all --max-tokens 32 --block-size 16 --chart "$OUT/main.png"
stop
# 2. eviction-pressure: a 512-block working set over a 256-block pool
serve_pair evict --num-blocks 256
bench evict --workload eviction-pressure --max-tokens 32 --block-size 16
stop
# 3. the published scenarios at their own block size (4); group-eviction with 8 blocks of 4
serve_pair published --block-size 4
for w in shared-prefix-basic high-reuse-many-requests branching-conversation multi-prefix-groups low-reuse-control; do
  bench "published-$w" --workload "$w" --max-tokens 4 --block-size 4
done
stop
serve_pair published-evict --block-size 4 --num-blocks 8 --max-num-seqs 1
bench published-group-eviction --workload group-eviction --max-tokens 4 --block-size 4
stop
