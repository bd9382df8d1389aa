#!/usr/bin/env bash
# Reproduces docs/benchmarks/journal/2026-11-21-to-28.md's cache-tier figures: the tiered-system-prompts workload (working set
# 4x the pool) with the tiers off, host memory, and disk; then a known 1,000-token prompt's
# first-request latency after a restart with the disk tier (warm) against one without (cold).
# One server at a time on a loopback port; JSON and text go to OUT (default bench-out/tiers).
#   ./mvnw -B -ntp -q -DskipTests package && server/bench-tiers.sh [OUT] [REQUESTS]
# Optional (the defaults reproduce the original runs): STEPS="1 2 3" picks the steps; MODES="off
# host disk" the tier settings of steps 1-2, in that order (`disk` runs the default
# --kv-offload-disk-write, reused; `disk-all` is the disk tier with `all`, write-through);
# RESTARTS="cold warm" the step-3 cases, plus `warm-all` (warm with `all`) and `evicted` /
# `evicted-all` (128 other prompts evict the known prompt before the shutdown, so only its
# eviction's disk write can keep it). Step 1 ends with a per-request comparison (summary.txt).
# JAR and PORT can be overridden.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/java-home.sh
JAR=${JAR:-server/target/radixserve.jar}
OUT=${1:-bench-out/tiers}
REQUESTS=${2:-192}
PORT=${PORT:-8130}
POOL=960   # blocks of 16: 15,360 tokens, a quarter of the 64 x 1,000-token working set
STEPS=" ${STEPS:-1 2 3} "
read -r -a modes <<< "${MODES:-off host disk}"
read -r -a restarts <<< "${RESTARTS:-cold warm}"
mkdir -p "$OUT"
DIR=$(mktemp -d /tmp/radixserve-tiers.XXXXXX)
pid=
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi; }
trap 'stop; rm -rf "$DIR"' EXIT
serve() {  # serve NAME ARGS...
  local name=$1; shift
  java --add-modules jdk.incubator.vector -jar "$JAR" serve --host 127.0.0.1 --port "$PORT" \
    --num-blocks $POOL "$@" >> "$OUT/$name.log" 2>&1 & pid=$!
  for _ in $(seq 240); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && return; sleep 0.5; done
  echo "server $name did not start" >&2; exit 1
}
tier() {  # tier NAME MODE: serve NAME with MODE's tier setting
  case $2 in
    off) serve "$1" ;;
    host) serve "$1" --kv-offload-memory 1g ;;
    disk) rm -rf "$DIR/disk"; serve "$1" --kv-offload-dir "$DIR/disk" --kv-offload-disk-size 2g ;;
    disk-all) rm -rf "$DIR/disk"; serve "$1" --kv-offload-dir "$DIR/disk" --kv-offload-disk-size 2g \
      --kv-offload-disk-write all ;;
    *) echo "unknown mode $2" >&2; exit 2 ;;
  esac
}
stamp() { echo "$(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"; }
# 1. the workload with each tier setting
if [[ $STEPS == *" 1 "* ]]; then
  for mode in "${modes[@]}"; do
    tier "$mode" "$mode"
    echo "$mode: $(stamp)" | tee -a "$OUT/load.txt"
    java --add-modules jdk.incubator.vector -jar "$JAR" bench --url "http://127.0.0.1:$PORT" \
      --workload tiered-system-prompts --num-requests "$REQUESTS" --max-tokens 8 --seed 0 \
      --concurrency 4 --warmup 4 --quiet --output "$OUT/$mode.json" | tee "$OUT/$mode.txt"
    curl -s "http://127.0.0.1:$PORT/metrics" | grep '^radixserve_kv_tier' > "$OUT/$mode.metrics" || true
    stop
  done
  echo "end: $(stamp)" >> "$OUT/load.txt"
  # per mode: hit tokens, TTFT, tier stores/loads; then, by request index (same seed, so the
  # same requests), the requests a tier served a whole system prompt (>= 992 tokens more cached)
  # that the tiers off recomputed, and those another mode served that this one recomputed
  python3 - "$OUT" "${modes[@]}" <<'PY' | tee "$OUT/summary.txt"
import json, statistics, sys
out, modes = sys.argv[1], sys.argv[2:]
def records(m):
    return {r["index"]: r for r in json.load(open(f"{out}/{m}.json"))["runs"][0]["requests"]
            if r["success"]}
def metric(m, name, tier):
    for line in open(f"{out}/{m}.metrics"):
        if line.startswith(f'radixserve_kv_tier_{name}{{tier="{tier}"'):
            return int(float(line.split()[-1]))
    return None
def med(rs, ids):
    return f"{statistics.median(rs[i]['ttftMs'] for i in ids):.0f} ms" if ids else "-"
recs = {m: records(m) for m in modes}
for m in modes:
    r = recs[m]
    ttft = sorted(x["ttftMs"] for x in r.values())
    row = (f"{m}: {sum(x['cachedTokens'] for x in r.values())} of"
           f" {sum(x['promptTokens'] for x in r.values())} prompt tokens cached, TTFT p50"
           f" {ttft[len(ttft) // 2]:.0f} / p90 {ttft[int(len(ttft) * 0.9)]:.0f} ms")
    for tier in ("host", "disk"):
        if metric(m, "stored_blocks_total", tier) is not None:
            row += (f"; {tier}: {metric(m, 'stored_blocks_total', tier)} blocks stored,"
                    f" {metric(m, 'loaded_blocks_total', tier)} loaded")
    print(row)
    if m != "off" and "off" in recs:
        off = recs["off"]
        won = [i for i in r if i in off and r[i]["cachedTokens"] - off[i]["cachedTokens"] >= 992]
        print(f"  {len(won)} requests with a system prompt from a tier, computed with the tiers"
              f" off: TTFT median {med(r, won)} here, {med(off, won)} off")
    for o in modes:
        if o in (m, "off"):
            continue
        lost = [i for i in r if i in recs[o] and recs[o][i]["cachedTokens"] - r[i]["cachedTokens"] >= 992]
        if lost:
            print(f"  {len(lost)} requests whose system prompt {o} served and {m} computed:"
                  f" TTFT median {med(r, lost)} here, {med(recs[o], lost)} {o}")
PY
fi
# 2. no reuse at all: what offloading costs when nothing comes back (128 x 256-token prompts,
#    twice the pool)
if [[ $STEPS == *" 2 "* ]]; then
  for mode in "${modes[@]}"; do
    tier "unique-$mode" "$mode"
    java --add-modules jdk.incubator.vector -jar "$JAR" bench --url "http://127.0.0.1:$PORT" \
      --workload unique --num-requests 128 --max-tokens 8 --seed 0 --concurrency 4 --warmup 4 \
      --quiet --output "$OUT/unique-$mode.json" | tee "$OUT/unique-$mode.txt"
    stop
  done
fi
# 3. first request of a known 1,000-token prompt after a restart: cold (no tier) vs warm (disk)
[[ $STEPS == *" 3 "* ]] || exit 0
python3 -c 'import json,random; r=random.Random(7); print(json.dumps({"model":"radixserve-embedded-gpt2","prompt":[r.randrange(50256) for _ in range(1000)],"max_tokens":1,"temperature":0}))' > "$DIR/known.json"
first() {  # seconds to the (only) token of the known prompt, and its cached tokens
  curl -s -o "$DIR/first.json" -w '%{time_total}' -H 'Content-Type: application/json' \
    --data @"$DIR/known.json" "http://127.0.0.1:$PORT/v1/completions"
  python3 -c 'import json, sys; u = json.load(open(sys.argv[1]))["usage"]
print(" s, cached", (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0))' "$DIR/first.json"
}
evict() {  # 128 other 256-token prompts, twice the pool: the known prompt leaves the pool
  java --add-modules jdk.incubator.vector -jar "$JAR" bench --url "http://127.0.0.1:$PORT" \
    --workload unique --num-requests 128 --max-tokens 8 --seed 0 --concurrency 4 --warmup 0 \
    --no-reset-cache \
    --quiet > /dev/null
}
: > "$OUT/restart.txt"
for i in 1 2 3; do
  for case in "${restarts[@]}"; do
    if [ "$case" = cold ]; then
      serve restart-cold; echo "cold $(first)" | tee -a "$OUT/restart.txt"; stop; continue
    fi
    policy=(); [[ $case == *-all ]] && policy=(--kv-offload-disk-write all)
    rm -rf "$DIR/warm"
    serve "restart-$case" --kv-offload-dir "$DIR/warm" "${policy[@]}"
    first > /dev/null   # the blocks the pool still caches are written at shutdown
    if [[ $case == evicted* ]]; then evict; fi
    stop
    serve "restart-$case" --kv-offload-dir "$DIR/warm" "${policy[@]}"
    echo "$case $(first) ($(stamp))" | tee -a "$OUT/restart.txt"
    stop
  done
done
