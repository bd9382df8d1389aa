#!/bin/bash
# radixserve against llama-server on the SAME .gguf files, one server at a time on the same
# cores: per file, each server's ready time (start to /health 200), batch-1 decode and 512-token
# prefill (bench/llamacpp/measure.py: token-id prompts, greedy, ignore_eos, medians of REPS),
# and its resident memory once measured (VmRSS) and at its peak (VmHWM). One JSON line per
# server start in OUT/results.jsonl; summary.py prints the table and the radixserve /
# llama-server ratios of the same run. `uptime` before and after goes to OUT/load.txt.
#
#   bench/gguf/compare.sh OUT FILE.gguf... (THREADS=2 REPS=3 DECODE=64 RADIXSERVE_JAR=...
#                                           LLAMACPP=/work/llamacpp/src/build/bin
#                                           CONC="4 8 16" MAX_TOKENS=32
#                                           PARTS="single shared": "shared" alone
#                                           skips the decode/prefill starts
#                                           RADIXSERVE_ARGS="--quantization int4": more
#                                           serve flags for radixserve; --speculative off
#                                           unless they give --speculative: llama-server
#                                           drafts nothing by default)
#
# Then, per file and concurrency C of CONC, each server started afresh serves `radixserve bench
# --workload shared-system-prompt --concurrency C` (the same client for both): llama-server with
# -np C slots of 2,048 tokens (its /v1/completions keeps cache_prompt on by default, so each slot
# reuses its own prefix), radixserve with its defaults (the radix cache shared by all). Output
# tokens per second, and per CPU-second of the server, go to OUT/results.jsonl (kind "shared").
#
# The files: bench/gguf/make-1b.sh (Llama-3.2-1B's shape, converted and quantized by llama.cpp).
# llama-server runs with --no-repack (its AMX/AVX-512 repacking SIGILLed on the 2026-11-28/29 VMs'
# CPUs; LLAMA_REPACK=1 leaves llama-server's default, repacking, where it runs) and one
# slot of 4,096 tokens; radixserve with its defaults for the file (Q8_0/Q4_0 repacked, K-quants
# requantized, an int8 LM head) and the same thread count.
set -u
rs_args=${RADIXSERVE_ARGS:-}
repack=--no-repack
[ -z "${LLAMA_REPACK:-}" ] || repack=
[[ $rs_args == *--speculative* ]] || rs_args="--speculative off $rs_args"
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
. "$repo/bench/llamacpp/servers.sh" # stop, kib
trap stop EXIT


# serve SERVER FILE PORT LOG SLOTS: starts one server on FILE (llama-server with SLOTS slots of
# 4,096 tokens, or 2,048 each past one), sets $pid, waits for /health; 1 if it never answers
serve() {
  if [ "$1" = radixserve ]; then
    java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Xmx2g \
      -jar "$jar" serve --model "$2" --host 127.0.0.1 --port "$3" \
      --threads "$threads" $rs_args > "$4" 2>&1 &
  else
    local ctx=4096
    [ "$5" -gt 1 ] && ctx=$(($5 * 2048))
    "$lc/llama-server" -m "$2" --host 127.0.0.1 --port "$3" -t "$threads" \
      -tb "$threads" -c "$ctx" -np "$5" $repack > "$4" 2>&1 &
  fi
  pid=$!
  for _ in $(seq 1 1200); do
    curl -sf "127.0.0.1:$3/health" > /dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  echo "$1 on $(basename "$2") did not start, see $4" >&2
  stop
  return 1
}

{ date -u; uptime; nproc; grep -m1 'model name' /proc/cpuinfo; } > "$out/load.txt"
parts=" ${PARTS:-single shared} "
for file in "$@"; do
  [[ $parts == *" single "* ]] || break
  name=$(basename "$file" .gguf)
  for server in radixserve llama-server; do
    port=$((20000 + RANDOM % 20000))
    log="$out/$name-$server.log"
    t0=$(date +%s.%N)
    serve "$server" "$file" "$port" "$log" 1 || continue
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
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat"; }
java_bench="java --enable-native-access=ALL-UNNAMED -Xmx1g -Djdk.httpclient.keepalive.timeout=2"
for file in "$@"; do
  [[ $parts == *" shared "* ]] || break
  name=$(basename "$file" .gguf)
  for c in ${CONC:-4 8 16}; do
    for server in radixserve llama-server; do
      port=$((20000 + RANDOM % 20000))
      serve "$server" "$file" "$port" "$out/$name-$server-c$c.log" "$c" || continue
      c0=$(cpu_ticks)
      json="$out/bench-$name-$server-c$c.json"
      # shellcheck disable=SC2086
      $java_bench -jar "$jar" bench --url "http://127.0.0.1:$port" \
        --workload shared-system-prompt --concurrency "$c" --max-tokens "${MAX_TOKENS:-32}" \
        --warmup 2 --no-reset-cache --seed 1 --quiet --output "$json" \
        > "$out/bench-$name-$server-c$c.txt" 2>&1
      ticks=$(( $(cpu_ticks) - c0 ))
      stop
      python3 - "$json" <<PY >> "$out/results.jsonl"
import json, os, sys
s = json.load(open(sys.argv[1]))["runs"][0]["summary"]
tick = os.sysconf("SC_CLK_TCK")
print(json.dumps(dict(kind="shared", file="$name", server="$server", concurrency=$c,
    failed=s["failed"], output_tok_s=s["outputThroughput"], ttft_p50_ms=s["ttftMs"]["p50"],
    output_tok_cpu_s=s["outputTokens"] / ($ticks / tick) if $ticks else None,
    load=open("/proc/loadavg").read().split()[0])))
PY
      tail -1 "$out/results.jsonl"
    done
  done
done
uptime >> "$out/load.txt"
python3 "$here/summary.py" "$out/results.jsonl"
