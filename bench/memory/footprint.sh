#!/bin/bash
# One server start on a model: seconds until /health is 200, then VmHWM (peak while loading),
# and VmRSS split into anonymous and file-backed pages, at ready and after 4 greedy requests of
# 16 tokens; the Java heap's committed size (radixserve); batch-1 decode rate of one 64-token
# greedy completion (a sanity figure, not a speed benchmark). One Markdown table row:
# | mode | ready | VmHWM | VmRSS at ready | VmRSS | RssAnon | RssFile | heap committed | decode | load |
# (docs/benchmarks/journal/2026-11-28-memory.md).
#
#   bench/memory/footprint.sh JAR MODEL_DIR none|int8|int4 [extra serve flags...]
#   bench/memory/footprint.sh LLAMA_SERVER GGUF LABEL [extra llama-server flags...]
#   JAVA_OPTS (default: none beyond the launcher's) is passed to java.
#   DECODE_TOKENS=N: the timed completion's length (default 64; longer: a decode-heavy load).
#   IDLE_S=N: then N seconds idle, and one more line: "# after N s idle: VmRSS .., heap .."
#   (whether the JVM gives committed heap back when idle; docs/benchmarks/journal/2026-11-28c-decode-heap.md).
#   TRACE=1: while the server loads, a line every 0.5 s, "# T s VmHWM: .. VmRSS: .. RssAnon: ..
#   RssFile: .." (MiB): in which phase of a load the peak falls
#   (docs/benchmarks/journal/2026-11-28d-int8-blocks.md).
set -u
server=$1
model=$2
mode=$3
shift 3
decode=${DECODE_TOKENS:-64}
name=$(basename "$model")
here=$(cd "$(dirname "$0")" && pwd)
port=$((20000 + RANDOM % 20000))
log=/tmp/footprint-$mode-$$.log
t0=$(date +%s.%N)
if [ "$(basename "$server")" = llama-server ]; then
  # llama.cpp's server as a user runs it on this CPU (--no-repack: its AMX repack SIGILLs here)
  "$server" -m "$model" --host 127.0.0.1 --port "$port" -t 2 --no-repack "$@" > "$log" 2>&1 &
else
  . "$here/../../.ci/java-home.sh"
  java=java
  [ -z "${JAVA_HOME:-}" ] || java="$JAVA_HOME/bin/java"
  # drafting off unless the flags say: the decode figure is the kernels', as llama-server's
  spec="--speculative off"
  [[ " $* " == *" --speculative"* ]] && spec=
  # shellcheck disable=SC2086
  # the launcher's own JVM flags (./radixserve): G1's periodic collection gives back idle heap
  "$java" --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector \
    -XX:G1PeriodicGCInterval=5000 ${JAVA_OPTS:-} \
    -jar "$server" serve --model "$model" --host 127.0.0.1 --port "$port" --threads 2 \
    --kv-cache-memory 256m --quantization "$mode" $spec "$@" > "$log" 2>&1 &
fi
pid=$!
trap 'kill "$pid" 2>/dev/null' EXIT
until curl -sf "127.0.0.1:$port/health" > /dev/null; do
  kill -0 "$pid" 2>/dev/null || { echo "server exited, see $log" >&2; tail -5 "$log" >&2; exit 1; }
  if [ -n "${TRACE:-}" ]; then
    awk -v now="$(date +%s.%N)" -v t0="$t0" '
      BEGIN { printf "# %5.1f s ", now - t0 }
      /^(VmHWM|VmRSS|RssAnon|RssFile):/ { printf " %s %d", $1, $2 / 1024 }
      END { print "" }' "/proc/$pid/status"
    sleep 0.5
  else
    sleep 0.2
  fi
done
t1=$(date +%s.%N)
kib() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$pid/status"; }
ready_rss=$(kib VmRSS)
for i in 1 2 3 4; do
  curl -s "127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"model\":\"$name\",\"prompt\":\"Request $i: hello there, tell me\",\"max_tokens\":16,\"temperature\":0}" \
    > /dev/null
done
d0=$(date +%s.%N)
curl -s "127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' \
  -d "{\"model\":\"$name\",\"prompt\":\"Decode timing\",\"max_tokens\":$decode,\"temperature\":0,\"ignore_eos\":true}" \
  | grep -q "\"completion_tokens\":$decode" || { echo "the timed completion failed" >&2; exit 1; }
d1=$(date +%s.%N)
rss=$(kib VmRSS); anon=$(kib RssAnon); file=$(kib RssFile); hwm=$(kib VmHWM)
heap=$(jcmd "$pid" GC.heap_info 2>/dev/null | sed -n 's/.*heap.*committed \([0-9]*\)K.*/\1/p' | head -1)
load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 -c "
m = lambda k: int(k) / 1024
print('| $mode | %.1f s | %.0f MiB | %.0f MiB | %.0f MiB | %.0f MiB | %.0f MiB | %.0f MiB | %.1f tok/s | $load |' % (
    $t1 - $t0, m($hwm), m($ready_rss), m($rss), m($anon), m($file), m(${heap:-0}), $decode / ($d1 - $d0)))"
if [ -n "${IDLE_S:-}" ]; then
  sleep "$IDLE_S"
  heap=$(jcmd "$pid" GC.heap_info 2>/dev/null | sed -n 's/.*heap.*committed \([0-9]*\)K.*/\1/p' | head -1)
  echo "# after $IDLE_S s idle: VmRSS $(($(kib VmRSS) / 1024)) MiB, heap committed $((${heap:-0} / 1024)) MiB"
fi
