#!/bin/bash
# A long prompt's prefill, end to end through the server, for two radixserve jars: each serves
# MODEL (--quantization int4 --kv-cache-dtype int8, 2 threads) in turn, one server at a time, and
# answers one completion of max_tokens 1 for a prompt of about TOKENS tokens; prints the request's
# seconds, prompt tokens per second, and B's speedup (A / B). Order A B B A (ORDER), medians.
# (docs/benchmarks/journal/2026-11-28d-prefill-attention.md)
#
#   bench/attention/prefill-e2e.sh JAR_A JAR_B MODEL_DIR [TOKENS]
set -eu
jar_a=$1
jar_b=$2
model=$3
tokens=${4:-6000}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=/dev/null
source "$root/.ci/java-home.sh"
name=$(basename "$model")
body=$(mktemp /tmp/prefill-e2e-XXXX.json)
out=$(mktemp /tmp/prefill-e2e-XXXX.txt)
trap 'rm -f "$body" "$out"' EXIT
# numbered words: about one token each, and no two prompts' prefixes matter (one request a server)
python3 -c "
import json, sys
words = ' '.join(f'w{i % 997}' for i in range(int(sys.argv[2]) // 2))
json.dump({'model': sys.argv[1], 'prompt': words, 'max_tokens': 1, 'temperature': 0}, sys.stdout)
" "$name" "$tokens" > "$body"
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores; load: $(uptime)"
echo "# A: $jar_a"
echo "# B: $jar_b"
run() { # tag jar
  local port=$((20000 + RANDOM % 20000)) log
  log=$(mktemp /tmp/prefill-e2e-server-XXXX.log)
  java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -jar "$2" serve \
    --model "$model" --host 127.0.0.1 --port "$port" --threads 2 --kv-cache-memory 512m \
    --quantization int4 --kv-cache-dtype int8 > "$log" 2>&1 &
  local pid=$!
  until curl -sf "127.0.0.1:$port/health" > /dev/null; do
    kill -0 "$pid" 2> /dev/null || { echo "server exited, see $log" >&2; exit 1; }
    sleep 0.5
  done
  local t0 t1 reply
  t0=$(date +%s.%N)
  reply=$(curl -s "127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' -d @"$body")
  t1=$(date +%s.%N)
  kill "$pid"
  wait "$pid" 2> /dev/null || true
  rm -f "$log"
  python3 -c "
import json, sys
reply = json.loads(sys.argv[2]); s = float(sys.argv[4]) - float(sys.argv[3])
n = reply['usage']['prompt_tokens']
print(f'{sys.argv[1]} {n} prompt tokens {s:.1f} s {n / s:.1f} tok/s')
" "$1" "$reply" "$t0" "$t1" | tee -a "$out"
}
for tag in ${ORDER:-A B B A}; do
  if [ "$tag" = A ]; then run A "$jar_a"; else run B "$jar_b"; fi
done
echo "# end load: $(uptime)"
python3 - "$out" <<'PY'
import statistics, sys
secs = {"A": [], "B": []}
for line in open(sys.argv[1]):
    f = line.split()
    secs[f[0]].append(float(f[4]))
if secs["A"] and secs["B"]:
    a, b = statistics.median(secs["A"]), statistics.median(secs["B"])
    print(f"median A {a:.1f} s, B {b:.1f} s: B is {a / b:.2f}x faster")
PY
