#!/usr/bin/env bash
# Reproduces docs/benchmarks/journal/2026-11-21-to-28.md's routing table: N replicas (default 3) with KV events on loopback,
# each workload sent round-robin and by the longest prefix the replicas' events report (from
# cold caches both times), cached-token ratio of both. Writes text and JSON into OUT.
#   ./mvnw -B -ntp -q -DskipTests package && server/bench-routing.sh [OUT] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/java-home.sh
JAR=server/target/radixserve.jar
OUT=${1:-bench-routing-out}
N=${2:-3}
mkdir -p "$OUT"
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=(); }
trap stop EXIT
args=()
for i in $(seq 0 $((N - 1))); do
  java --add-modules jdk.incubator.vector -jar "$JAR" serve --host 127.0.0.1 --port $((8200 + i)) --threads 1 --kv-events \
    --kv-events-endpoint "tcp://*:$((5600 + i))" --kv-events-replay-endpoint "tcp://*:$((5650 + i))" \
    --kv-events-topic "kv@127.0.0.1:$((8200 + i))@radixserve-embedded-gpt2" \
    > "$OUT/replica$i.log" 2>&1 & pids+=($!)
  args+=(--route-url "http://127.0.0.1:$((8200 + i))" --route-events "tcp://127.0.0.1:$((5600 + i))"
         --route-replay "tcp://127.0.0.1:$((5650 + i))")
done
for i in $(seq 0 $((N - 1))); do
  for _ in $(seq 240); do curl -sf "http://127.0.0.1:$((8200 + i))/health" >/dev/null && break; sleep 0.5; done
done
for w in multi-turn agent-loop multi-prefix-groups shared-system-prompt; do
  java --add-modules jdk.incubator.vector -jar "$JAR" bench "${args[@]}" --workload "$w" --seed 0 --concurrency 8 --max-tokens 16 \
    --block-size 16 --quiet --output "$OUT/$w.json" | tee "$OUT/$w.txt"
done
