#!/bin/bash
# Memory of one radixserve start: seconds until /health is 200, VmRSS then, VmRSS after 8 greedy
# requests of 32 tokens, and VmHWM; one Markdown table row (docs/benchmarks/journal/2026-11-21-to-28.md "The KV pool faulted in
# at start").
#
#   bench/llamacpp/rss.sh JAR MODEL_DIR none|int8|int4 [extra serve flags...]
set -u
jar=$1
model=$2
mode=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../.ci/java-home.sh"
port=$((20000 + RANDOM % 20000))
t0=$(date +%s.%N)
java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Xmx2g -jar "$jar" \
  serve --model "$model" --host 127.0.0.1 --port "$port" --threads 1 --num-blocks 256 \
  --quantization "$mode" "$@" > "/tmp/rss-$mode.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null' EXIT
until curl -sf "127.0.0.1:$port/health" > /dev/null; do
  kill -0 "$pid" 2>/dev/null || { echo "server exited, see /tmp/rss-$mode.log" >&2; exit 1; }
  sleep 0.2
done
t1=$(date +%s.%N)
r0=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
for i in $(seq 1 8); do
  curl -s "127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"prompt\":\"Request $i: hello there, tell me\",\"max_tokens\":32,\"temperature\":0}" \
    > /dev/null
done
r1=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
h=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
python3 -c "print('| $mode | %.1f s | %d MiB | %d MiB | %d MiB |' % ($t1 - $t0, $r0 / 1024, $r1 / 1024, $h / 1024))"
