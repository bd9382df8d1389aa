#!/bin/bash
# The 8B shape on this machine (issue 39): radixserve `--quantization int4 --kv-cache-dtype int8`
# against llama.cpp's llama-server on Q4_0 of the same weights, one server at a time, the same
# context budget (32,768 tokens of 8-bit KV: llama-server -c 32768 -ctk q8_0 -ctv q8_0 -fa on).
# Per server: seconds to /health, VmHWM (peak while loading), VmRSS at ready and after the
# measurements, then bench/llamacpp/measure.py's batch-1 decode and 512-token prefill (token-id
# prompts, medians of REPS). With LONG=N, radixserve then answers one N-token prompt (random ids,
# max_tokens 8; the time and VmRSS/VmHWM after it).
#
#   bench/memory/eight-b.sh JAR MODEL_DIR GGUF [REPS] [DECODE]
#   MODEL_DIR: bench/memory/make_8b.py's checkpoint; GGUF: convert_hf_to_gguf.py --outtype bf16
#   of it, then llama-quantize Q4_0. env: WEIGHTS_CACHE (radixserve's --weights-cache; its first
#   start writes the entry), KV (radixserve's --kv-cache-memory, 2304m: 32,768+ tokens at int8),
#   LONG, SERVERS ("radixserve llama-server"), RADIXSERVE_ARGS (more serve flags; with
#   --speculative off unless they give --speculative: llama-server drafts nothing by default).
set -eu
rs_args=${RADIXSERVE_ARGS:-}
[[ $rs_args == *--speculative* ]] || rs_args="--speculative off $rs_args"
jar=$1
model=$2
gguf=$3
reps=${4:-2}
decode=${5:-32}
here=$(cd "$(dirname "$0")" && pwd)
llama=${LLAMA_SERVER:-/work/llamacpp/src/build/bin/llama-server}
. "$here/../../.ci/java-home.sh"
java=java
[ -z "${JAVA_HOME:-}" ] || java="$JAVA_HOME/bin/java"
kib() { awk -v k="$1" '$1 == k":" {printf "%.0f", $2 / 1024}' "/proc/$pid/status"; }
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GiB; $(uptime)"
for server in ${SERVERS:-radixserve llama-server}; do
  port=$((20000 + RANDOM % 20000))
  log=/tmp/eight-b-$server-$$.log
  t0=$(date +%s.%N)
  if [ "$server" = llama-server ]; then
    # as a user runs it on this CPU (--no-repack: its AMX repack SIGILLs here)
    "$llama" -m "$gguf" --host 127.0.0.1 --port "$port" -t 2 --no-repack -np 1 -c 32768 \
      -ctk q8_0 -ctv q8_0 -fa on > "$log" 2>&1 &
  else
    # shellcheck disable=SC2086
    "$java" --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector ${JAVA_OPTS:-} \
      -jar "$jar" serve --model "$model" --host 127.0.0.1 --port "$port" --threads 2 \
      --quantization int4 --kv-cache-dtype int8 --kv-cache-memory "${KV:-2304m}" \
      ${WEIGHTS_CACHE:+--weights-cache "$WEIGHTS_CACHE"} $rs_args > "$log" 2>&1 &
  fi
  pid=$!
  until curl -sf "127.0.0.1:$port/health" > /dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo "$server exited, see $log" >&2; tail -5 "$log" >&2; exit 1; }
    sleep 0.5
  done
  t1=$(date +%s.%N)
  echo "$server: ready $(python3 -c "print(round($t1 - $t0, 1))") s, VmHWM $(kib VmHWM) MiB, VmRSS at ready $(kib VmRSS) MiB"
  python3 "$here/../llamacpp/measure.py" "http://127.0.0.1:$port" "$reps" "$decode" 8 "$pid"
  echo "$server: after: VmHWM $(kib VmHWM) MiB, VmRSS $(kib VmRSS) MiB (anon $(kib RssAnon), file $(kib RssFile)); load $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ -n "${LONG:-}" ] && [ "$server" = radixserve ]; then
    python3 - "$port" "$LONG" <<'PY'
import json, random, sys, time, urllib.request
port, n = sys.argv[1], int(sys.argv[2])
url = f"http://127.0.0.1:{port}"
model = json.load(urllib.request.urlopen(url + "/v1/models"))["data"][0]["id"]
rng = random.Random(32)
body = {"model": model, "prompt": [rng.randrange(1000, 128000) for _ in range(n)],
        "max_tokens": 8, "temperature": 0, "ignore_eos": True}
t = time.perf_counter()
req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                             headers={"Content-Type": "application/json"})
out = json.load(urllib.request.urlopen(req, timeout=6 * 3600))
took = time.perf_counter() - t
print(f"long prompt: {out['usage']} in {took:.0f} s ({n / took:.1f} prompt tok/s incl. 8 decoded)")
PY
    echo "$server: after the long prompt: VmHWM $(kib VmHWM) MiB, VmRSS $(kib VmRSS) MiB; load $(cut -d' ' -f1-3 /proc/loadavg)"
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
echo "# $(date -u +%FT%TZ); $(uptime)"
