#!/bin/bash
# Batch-1 decode and 512-token prefill only (no concurrency runs): one server at a time, each
# started fresh, WARMUP (2) unmeasured measure.py requests, then `measure.py URL 5 DECODE ROUND PID`. One
# JSON line per server start in OUT/results.jsonl; summarize with quick_summary.py.
#
#   THREADS=1 DECODE=128 WARMUP=2 bench/llamacpp/quick.sh WORK OUT ROUNDS VARIANT...
#   e.g. bench/llamacpp/quick.sh /work/llamacpp /tmp/q 3 rs-int8 lc-q8_0 rs-int4 lc-q4_0
#
# VARIANT: as servers.sh's launch takes them.
# RADIXSERVE_JAR (default WORK/radixserve.jar) is the server jar.
set -u
work=$1
out=$2
rounds=$3
shift 3
threads=${THREADS:-1}
decode=${DECODE:-128} # tokens per decode request: the context runs from 16 to 16 + DECODE
# unmeasured requests first: 2 leaves radixserve's JIT still compiling (a young server); 20
# measures a warm one
warmup=${WARMUP:-2}
jar=${RADIXSERVE_JAR:-$work/radixserve.jar}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../.ci/java-home.sh"
java="java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector"
. "$here/servers.sh"
mkdir -p "$out"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null' EXIT
for r in $(seq 1 "$rounds"); do
  for v in "$@"; do
    port=$((20000 + RANDOM % 20000))
    launch "$v" "$port" "$threads" "$out/${v//\//_}.log" || exit 2
    for _ in $(seq 1 600); do
      curl -sf "127.0.0.1:$port/health" > /dev/null && break
      sleep 0.5
    done
    python3 "$here/measure.py" "http://127.0.0.1:$port" "$warmup" "$decode" "9$r" "$pid" > /dev/null 2>&1
    load=$(cut -d' ' -f1 /proc/loadavg)
    m=$(python3 "$here/measure.py" "http://127.0.0.1:$port" 5 "$decode" "$r" "$pid" 2>> "$out/err.log")
    kill "$pid"
    wait "$pid" 2>/dev/null
    pid=
    echo "{\"variant\":\"$v\",\"round\":$r,\"threads\":$threads,\"decode\":$decode,\"load\":$load,\"m\":${m:-null}}" \
      >> "$out/results.jsonl"
    echo "$(date -u +%T) round $r $v done (load $load)"
  done
done
