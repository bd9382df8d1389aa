#!/bin/bash
# radixserve against llama-server on the same GPT-2-small-shaped weights, one server at a time
# on the same cores, ROUNDS rounds with the pairs interleaved (none/f32, int8/Q8_0, int4/Q4_0; the
# order inside a pair alternates by round). Per server start: measure.py (batch-1 decode, 512-token
# prefill) and `radixserve bench --workload shared-system-prompt` at concurrency 4 and 16.
# One JSON line per server start goes to OUT/results.jsonl (with the server process's CPU time
# per bench run); summarize.py makes the table.
#
#   bench/llamacpp/compare.sh WORK OUT [ROUNDS] [THREADS]
#   VARIANTS="rs-int4-head lc-q4_0" bench/llamacpp/compare.sh ...   (other servers; rs-int4-head:
#   int4 with its LM head quantized too)
#
# WORK: build.sh's directory, with gguf/gpt2-small-{f32,q8_0,q4_0}.gguf and gpt2-small/ (the HF
# checkpoint, make-gguf.sh); RADIXSERVE_JAR (default WORK/radixserve.jar) is the server jar.
set -u
work=$1
out=$2
rounds=${3:-3}
threads=${4:-2}
jar=${RADIXSERVE_JAR:-$work/radixserve.jar}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../.ci/java-home.sh" # a JDK 25 even where the PATH's java is older
java="java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector"
mkdir -p "$out"
pid=
. "$here/servers.sh"
trap stop EXIT

start() { # variant port
  launch "$1" "$2" "$threads" "$out/${1//\//_}.log" || return 1
  for _ in $(seq 1 600); do
    curl -sf "127.0.0.1:$2/health" > /dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.5
  done
  return 1
}

cpu_ticks() { # the server's utime + stime, all threads, in clock ticks
  awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat"
}

for round in $(seq 1 "$rounds"); do
  if [ -n "${VARIANTS:-}" ]; then # e.g. VARIANTS="rs-int4-head lc-q4_0": reversed every other round
    order=$VARIANTS
    [ $((round % 2)) -eq 1 ] || order=$(echo "$VARIANTS" | tr ' ' '\n' | tac | tr '\n' ' ')
  elif [ $((round % 2)) -eq 1 ]; then
    order="rs-none lc-f32 lc-q8_0 rs-int8 rs-int4 lc-q4_0"
  else
    order="lc-f32 rs-none rs-int8 lc-q8_0 lc-q4_0 rs-int4"
  fi
  for v in $order; do
    port=$((20000 + RANDOM % 20000))
    t0=$(date +%s)
    if ! start "$v" "$port"; then
      echo "{\"variant\":\"$v\",\"round\":$round,\"error\":\"did not start\"}" >> "$out/results.jsonl"
      stop
      continue
    fi
    load=$(cut -d' ' -f1 /proc/loadavg)
    m=$(python3 "$here/measure.py" "http://127.0.0.1:$port" 3 128 "$round" "$pid" 2>> "$out/errors.log")
    cpu=""
    for c in 4 16; do
      c0=$(cpu_ticks)
      # idle connections dropped after 2 s, before llama-server's (cpp-httplib) 5 s keep-alive
      # timeout: reusing one the server has just closed fails a POST with "header parser
      # received no bytes" (seen on 6 of 18 llama-server runs before this)
      $java -Xmx1g -Djdk.httpclient.keepalive.timeout=2 -jar "$jar" bench --url "http://127.0.0.1:$port" \
        --workload shared-system-prompt --concurrency "$c" --max-tokens 32 --warmup 2 \
        --no-reset-cache --seed "$round" --quiet --output "$out/bench-$v-$round-c$c.json" \
        > "$out/bench-$v-$round-c$c.txt" 2>&1
      cpu="$cpu\"c$c\":$(( $(cpu_ticks) - c0 )),"
    done
    stop
    load2=$(cut -d' ' -f1 /proc/loadavg)
    echo "{\"variant\":\"$v\",\"round\":$round,\"start\":$t0,\"load\":[$load,$load2],\"bench_cpu_ticks\":{${cpu%,}},\"measure\":${m:-null}}" \
      >> "$out/results.jsonl"
    echo "$(date -u +%H:%M:%S) round $round $v done (load $load -> $load2)"
  done
done
