#!/bin/bash
# One long prompt through radixserve at the 8B shape (issue 39: "answers a 32,000-token prompt"),
# resumable across runs: the server keeps a disk tier (--kv-offload-dir), and at DEADLINE it is
# stopped with SIGTERM, which aborts the prompt and writes every block the pool caches (the
# prompt's computed chunks are in the cache: "cache unfinished request") to the directory. The
# next run with the same directory loads that prefix from disk and computes the rest. A 32k-token
# prompt of the 8B shape takes longer on 2 cores than one session here; this is how it is done
# in parts without computing any token twice.
#
#   bench/memory/long-prompt.sh JAR MODEL_DIR KV_DIR [LONG] [DEADLINE]
#   MODEL_DIR: bench/memory/make_8b.py's checkpoint; KV_DIR: the disk tier (~1.1 MB a block of
#   16 tokens at int8); LONG: prompt tokens (32000: random ids of eight-b.sh's seed, max_tokens 8);
#   DEADLINE: a `date -d` time at which to stop and persist if the answer has not come.
#   env: WEIGHTS_CACHE, KV (--kv-cache-memory, 2304m), RADIXSERVE_ARGS (more serve flags).
# Prints every minute the prompt tokens in the pool (vllm:kv_cache_usage_perc x the pool's
# tokens), VmRSS and VmHWM, and at the end the answer's usage (cached_tokens: the part that came
# from the disk tier) or that it was stopped.
set -eu
jar=$1
model=$2
kvdir=$3
long=${4:-32000}
deadline=$(date -d "${5:-tomorrow}" +%s)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../.ci/java-home.sh"
java=java
[ -z "${JAVA_HOME:-}" ] || java="$JAVA_HOME/bin/java"
port=$((20000 + RANDOM % 20000))
log=/tmp/long-prompt-$$.log
mkdir -p "$kvdir"
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores; $(uptime); $(du -sh "$kvdir" | cut -f1) in $kvdir"
# shellcheck disable=SC2086
"$java" --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector ${JAVA_OPTS:-} \
  -jar "$jar" serve --model "$model" --host 127.0.0.1 --port "$port" --threads 2 \
  --quantization int4 --kv-cache-dtype int8 --kv-cache-memory "${KV:-2304m}" --speculative off \
  --kv-offload-dir "$kvdir" --kv-offload-disk-size 8g --shutdown-timeout 1s \
  ${WEIGHTS_CACHE:+--weights-cache "$WEIGHTS_CACHE"} ${RADIXSERVE_ARGS:-} > "$log" 2>&1 &
pid=$!
kib() { awk -v k="$1" '$1 == k":" {printf "%.0f", $2 / 1024}' "/proc/$pid/status" 2>/dev/null || echo "?"; }
until curl -sf "127.0.0.1:$port/health" > /dev/null; do
  kill -0 "$pid" 2>/dev/null || { echo "server exited, see $log" >&2; tail -5 "$log" >&2; exit 1; }
  sleep 0.5
done
echo "ready: VmHWM $(kib VmHWM) MiB, VmRSS $(kib VmRSS) MiB; $(grep -o 'KV pool [0-9]* blocks[^;]*' "$log")"
blocks=$(grep -o 'KV pool [0-9]* blocks of [0-9]*' "$log" | awk '{print $3 * $6}')
out=$(mktemp)
python3 - "$port" "$long" > "$out" 2>&1 <<'PY' &
import json, random, sys, time, urllib.request
port, n = sys.argv[1], int(sys.argv[2])
url = f"http://127.0.0.1:{port}"
model = json.load(urllib.request.urlopen(url + "/v1/models"))["data"][0]["id"]
rng = random.Random(32)  # eight-b.sh's LONG prompt
body = {"model": model, "prompt": [rng.randrange(1000, 128000) for _ in range(n)],
        "max_tokens": 8, "temperature": 0, "ignore_eos": True}
t = time.perf_counter()
req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                             headers={"Content-Type": "application/json"})
try:
    out = json.load(urllib.request.urlopen(req, timeout=24 * 3600))
except Exception as e:  # the deadline's SIGTERM answers 503
    print(f"long prompt stopped after {time.perf_counter() - t:.0f} s: {e}")
    sys.exit(1)
took = time.perf_counter() - t
print(f"long prompt answered: {out['choices'][0].get('text')!r} usage {out['usage']} in {took:.0f} s")
PY
client=$!
while kill -0 "$client" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do # (or stopped by hand)
  sleep 60
  used=$(curl -s -m 5 "127.0.0.1:$port/metrics" | awk -v t="$blocks" '/^vllm:kv_cache_usage_perc/ {printf "%d", $2 * t}')
  echo "$(date -u +%T) ${used:-?} tokens in the pool, VmRSS $(kib VmRSS) MiB, VmHWM $(kib VmHWM) MiB; load $(cut -d' ' -f1 /proc/loadavg)"
  if [ "$(date +%s)" -ge "$deadline" ] && kill -0 "$client" 2>/dev/null; then
    echo "$(date -u +%T) deadline: SIGTERM, the pool's blocks to $kvdir"
    break
  fi
done
echo "after: VmHWM $(kib VmHWM) MiB, VmRSS $(kib VmRSS) MiB; load $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s)
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
wait "$client" 2>/dev/null || true
cat "$out"
echo "stopped in $(( $(date +%s) - t0 )) s; $(du -sh "$kvdir" | cut -f1) in $kvdir, $(find "$kvdir" -type f | wc -l) files"
grep -i -E "tier|persist|disk" "$log" | tail -5 || true
echo "# $(date -u +%FT%TZ); $(uptime)"
