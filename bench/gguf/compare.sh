#!/bin/bash
# radixserve against llama-server on the SAME .gguf files, one server at a time on the same
# cores: per file, each server's ready time (start to /health 200), batch-1 decode and 512-token
# prefill (bench/llamacpp/measure.py: token-id prompts, greedy, ignore_eos, medians of REPS),
# and its resident memory once measured (VmRSS) and at its peak (VmHWM). One JSON line per
# server start in OUT/results.jsonl; summary.py prints the table and the radixserve /
# llama-server ratios of the same run. `uptime` before and after goes to OUT/load.txt.
#
#   bench/gguf/compare.sh OUT FILE.gguf... (THREADS=2 REPS=3 DECODE=64 RADIXSERVE_JAR=...
#                                           LLAMACPP=/work/llamacpp/src/build/bin)
#
# The files: bench/gguf/make-1b.sh (Llama-3.2-1B's shape, converted and quantized by llama.cpp).
# llama-server runs with --no-repack (its AMX/AVX-512 repacking SIGILLs on this VM's CPU) and one
# slot of 4,096 tokens; radixserve with its defaults for the file (Q8_0/Q4_0 repacked, K-quants
# requantized, an int8 LM head) and the same thread count.
set -u
out=$1
shift
threads=${THREADS:-2}
reps=${REPS:-3}
decode=${DECODE:-64}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
jar=${RADIXSERVE_JAR:-$repo/server/target/radixserve.jar}
lc=${LLAMACPP:-/work/llamacpp/src/build/bin}
. "$repo/.ci/java-home.sh"
mkdir -p "$out"
pid=
. "$repo/bench/llamacpp/servers.sh" # stop
trap stop EXIT

kib() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$pid/status"; }

{ date -u; uptime; nproc; grep -m1 'model name' /proc/cpuinfo; } > "$out/load.txt"
for file in "$@"; do
  name=$(basename "$file" .gguf)
  for server in radixserve llama-server; do
    port=$((20000 + RANDOM % 20000))
    log="$out/$name-$server.log"
    t0=$(date +%s.%N)
    if [ "$server" = radixserve ]; then
      java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Xmx2g \
        -jar "$jar" serve --model "$file" --host 127.0.0.1 --port "$port" \
        --threads "$threads" > "$log" 2>&1 &
    else
      "$lc/llama-server" -m "$file" --host 127.0.0.1 --port "$port" -t "$threads" \
        -tb "$threads" -c 4096 -np 1 --no-repack > "$log" 2>&1 &
    fi
    pid=$!
    ready=
    for _ in $(seq 1 1200); do
      if curl -sf "127.0.0.1:$port/health" > /dev/null; then ready=1; break; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    if [ -z "$ready" ]; then
      echo "$server on $name did not start, see $log" >&2
      stop
      continue
    fi
    t1=$(date +%s.%N)
    rss_ready=$(kib VmRSS)
    m=$(python3 "$repo/bench/llamacpp/measure.py" "http://127.0.0.1:$port" "$reps" "$decode" 0 \
      "$pid")
    rss=$(kib VmRSS)
    hwm=$(kib VmHWM)
    python3 - "$m" <<PY >> "$out/results.jsonl"
import json, sys
m = json.loads(sys.argv[1])
m.update(file="$name", server="$server", bytes=$(stat -c %s "$file"),
         ready_s=round($t1 - $t0, 2), rss_ready_mib=$rss_ready // 1024,
         rss_mib=$rss // 1024, hwm_mib=$hwm // 1024, threads=$threads)
print(json.dumps(m))
PY
    tail -1 "$out/results.jsonl"
    stop
  done
done
uptime >> "$out/load.txt"
python3 "$here/summary.py" "$out/results.jsonl"
