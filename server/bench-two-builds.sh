#!/usr/bin/env bash
# Compares this build with another one (e.g. the base commit's jar), both with the prefix cache on,
# in one session: this build serves at :8100, BASE_JAR at :8101. `bench` measures its --url first,
# so each seed runs twice, once in each order, and the summary gives this / base per run and the
# geometric mean over runs (a drifting load on a shared machine favours neither build). A server
# must never see a workload twice (the second run would hit the first's prefixes), so the
# base-first run of seed S uses seed S + 1000.
# Writes JSON and text per workload, seed and order into OUT (default bench-two/). Needs python3.
#   git worktree add /tmp/base <commit> && (cd /tmp/base && ./mvnw -B -ntp -q -pl server -am package -DskipTests)
#   ./mvnw -B -ntp -q -pl server -am package -DskipTests
#   server/bench-two-builds.sh /tmp/base/server/target/radixserve.jar [OUT] [SEEDS] [WORKLOADS]
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/java-home.sh
BASE=${1:?usage: $0 BASE_JAR [OUT] [SEEDS] [WORKLOADS]}
OUT=${2:-bench-two}
SEEDS=${3:-0 1 2}
WORKLOADS=${4:-multi-turn agent-loop}
JAR=server/target/radixserve.jar
THIS=http://127.0.0.1:8100
OTHER=http://127.0.0.1:8101
mkdir -p "$OUT"
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=(); }
trap stop EXIT
java -jar "$JAR" serve --host 127.0.0.1 --port 8100 > "$OUT/this.log" 2>&1 & pids+=($!)
java -jar "$BASE" serve --host 127.0.0.1 --port 8101 > "$OUT/base.log" 2>&1 & pids+=($!)
for port in 8100 8101; do
  for _ in $(seq 120); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.5; done
done
for seed in $SEEDS; do
  for w in $WORKLOADS; do
    for order in this-first base-first; do
      if [ "$order" = this-first ]; then first=$THIS; second=$OTHER; s=$seed
      else first=$OTHER; second=$THIS; s=$((seed + 1000)); fi
      java -jar "$JAR" bench --url "$first" --compare-url "$second" --seed "$s" --concurrency 8 \
        --max-tokens 32 --block-size 16 --quiet --workload "$w" \
        --output "$OUT/$w-seed$seed-$order.json" > "$OUT/$w-seed$seed-$order.txt"
    done
  done
done
python3 - "$OUT" "$THIS" <<'EOF' | tee "$OUT/summary.txt"
import glob, json, math, sys
out, this = sys.argv[1], sys.argv[2]
rows = {}
for f in sorted(glob.glob(out + "/*-seed*-*-first.json")):
    runs = {("this" if r["summary"]["url"].rstrip("/") == this else "base"): r["summary"]
            for r in json.load(open(f))["runs"] if r["role"] in ("primary", "compare")}
    rows.setdefault(runs["this"]["workload"], []).append((f.split("/")[-1][:-5], runs))
print("run | cached this / base / token max | TTFT p50 this / base (ms) | p50 ratio | p99 ratio")
for w, runs in rows.items():
    p50, p99 = [], []
    for name, r in runs:
        t, b = r["this"], r["base"]
        p50.append(t["ttftMs"]["p50"] / b["ttftMs"]["p50"])
        p99.append(t["ttftMs"]["p99"] / b["ttftMs"]["p99"])
        print(f"{name} | {t['cachedTokens']} / {b['cachedTokens']} / {t['tokenGranularMaxCachedTokens']}"
              f" | {t['ttftMs']['p50']:.0f} / {b['ttftMs']['p50']:.0f} | {p50[-1]:.2f}x | {p99[-1]:.2f}x")
    g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    print(f"{w}: geometric mean over {len(runs)} runs: TTFT p50 {g(p50):.2f}x, p99 {g(p99):.2f}x"
          f" (range p50 {min(p50):.2f}-{max(p50):.2f}x)")
EOF
