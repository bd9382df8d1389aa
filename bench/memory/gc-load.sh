#!/bin/bash
# The Java heap's collections under load, for JVM option sets: one radixserve start per set and
# round (int4, 512 MiB of bf16 KV, cached weights, drafting off), `radixserve bench --workload
# shared-system-prompt` at concurrency 8 (48 requests of 32 tokens), then the throughput, the
# number of collection pauses and their total from -Xlog:gc (the whole process: load included),
# and the committed heap. (docs/benchmarks/journal/2026-11-30e-idle-heap.md)
#
#   bench/memory/gc-load.sh JAR MODEL_DIR ROUNDS "OPTS_1" "OPTS_2" ...   (e.g. "" "-XX:MaxHeapFreeRatio=20 -XX:MinHeapFreeRatio=5")
set -u
jar=$1
model=$2
rounds=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../.ci/java-home.sh"
java=java
[ -z "${JAVA_HOME:-}" ] || java="$JAVA_HOME/bin/java"
cache=$(mktemp -d /tmp/gc-load-weights-XXXX)
trap 'rm -rf "$cache"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores; $(uptime)"
echo "| JVM options | output tok/s | GC pauses | pause total | heap committed | load |"
echo "|---|---:|---:|---:|---:|---|"
first=1
for r in $(seq "$rounds"); do
  for opts in "$@"; do
    port=$((20000 + RANDOM % 20000))
    gclog=$(mktemp /tmp/gc-load-XXXX.log)
    # shellcheck disable=SC2086
    "$java" --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Xmx2g \
      -XX:G1PeriodicGCInterval=5000 $opts -Xlog:gc:file="$gclog" -jar "$jar" serve \
      --model "$model" --host 127.0.0.1 --port "$port" --threads 2 --kv-cache-memory 512m \
      --kv-cache-dtype bfloat16 --quantization int4 --weights-cache "$cache" \
      --speculative off > /dev/null 2>&1 &
    pid=$!
    until curl -sf "127.0.0.1:$port/health" > /dev/null; do
      kill -0 "$pid" 2>/dev/null || { echo "server exited" >&2; exit 1; }
      sleep 0.5
    done
    tps=$("$java" -jar "$jar" bench --url "http://127.0.0.1:$port" --workload shared-system-prompt \
      --concurrency 8 --max-tokens 32 --num-requests 48 --max-model-len 2048 --quiet --warmup 8 \
      2>&1 | sed -n 's/.*Output token throughput (tok\/s): *\([0-9.]*\).*/\1/p' | head -1)
    heap=$(jcmd "$pid" GC.heap_info 2>/dev/null | sed -n 's/.*heap.*committed \([0-9]*\)K.*/\1/p' | head -1)
    kill "$pid"
    wait "$pid" 2>/dev/null
    pauses=$(grep -c Pause "$gclog")
    ms=$(grep Pause "$gclog" | grep -o '[0-9.]*ms$' | tr -d ms | awk '{s += $1} END {printf "%.0f", s}')
    label=${opts:-(none)}
    # the first start writes the weights cache: its load's collections are not comparable
    [ -n "$first" ] && label="$label, first start"
    first=
    echo "| $label | $tps | $pauses | $ms ms | $((${heap:-0} / 1024)) MiB | $(cut -d' ' -f1-3 /proc/loadavg) |"
    rm -f "$gclog"
  done
done
