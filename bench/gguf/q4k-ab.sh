#!/bin/bash
# A Q4_K(_M) file served two ways by the same jar, one server at a time on the same cores:
# `--quantization int4` (its Q4_K layers on their own int4 codes with a float offset per block,
# the others re-rounded to int4; docs/gguf.md) against `--quantization int8` (every layer
# requantized to int8: `auto` until 2026-12-02, which now serves the Q4_K layers on their codes
# too; B=auto measures that). Per start: ready time, VmRSS after the measurement, VmHWM, and
# bench/llamacpp/measure.py's batch-1 decode and 512-token prefill (medians of REPS, and the same
# rates per CPU-second of the server, which a loaded machine's neighbours disturb less). ROUNDS
# rounds, the two modes alternating (A first in odd rounds, B first in even ones). Prints one
# JSON line per start into OUT/results.jsonl, then the medians per mode and A / B.
#
#   bench/gguf/q4k-ab.sh OUT FILE.gguf   (A=int4 B=int8 ROUNDS=2 REPS=3 DECODE=64 THREADS=2
#                                         RADIXSERVE_JAR=server/target/radixserve.jar)
set -euo pipefail
out=$1
file=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
jar=${RADIXSERVE_JAR:-$repo/server/target/radixserve.jar}
rounds=${ROUNDS:-2}
reps=${REPS:-3}
decode=${DECODE:-64}
threads=${THREADS:-2}
a=${A:-int4}
b=${B:-int8}
. "$repo/.ci/java-home.sh"
mkdir -p "$out"
pid=
. "$repo/bench/llamacpp/servers.sh" # stop, kib
trap stop EXIT

{ date -u; uptime; nproc; grep -m1 'model name' /proc/cpuinfo; } > "$out/load.txt"
for round in $(seq 1 "$rounds"); do
  modes="$a $b"
  [ $((round % 2)) -eq 0 ] && modes="$b $a"
  for mode in $modes; do
    port=$((20000 + RANDOM % 20000))
    log="$out/$mode-$round.log"
    t0=$(date +%s.%N)
    java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Xmx2g \
      -jar "$jar" serve --model "$file" --host 127.0.0.1 --port "$port" \
      --threads "$threads" --quantization "$mode" > "$log" 2>&1 &
    pid=$!
    until curl -sf "127.0.0.1:$port/health" > /dev/null; do
      kill -0 "$pid" 2>/dev/null || { echo "$mode did not start, see $log" >&2; exit 1; }
      sleep 0.25
    done
    t1=$(date +%s.%N)
    m=$(python3 "$repo/bench/llamacpp/measure.py" "http://127.0.0.1:$port" "$reps" "$decode" 0 \
      "$pid")
    python3 - "$m" <<PY >> "$out/results.jsonl"
import json, sys
m = json.loads(sys.argv[1])
m.update(mode="$mode", round=$round, ready_s=round($t1 - $t0, 2),
         rss_mib=$(kib VmRSS) // 1024, hwm_mib=$(kib VmHWM) // 1024)
print(json.dumps(m))
PY
    tail -1 "$out/results.jsonl"
    stop
  done
done
uptime >> "$out/load.txt"
python3 - "$out/results.jsonl" "$a" "$b" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ma, mb = sys.argv[2], sys.argv[3]
keys = [k for k, v in rows[0].items() if isinstance(v, (int, float)) and k != "round"]
med = {m: {k: statistics.median(r[k] for r in rows if r["mode"] == m) for k in keys}
       for m in (ma, mb)}
print(f"| figure | {ma} | {mb} | {ma} / {mb} |")
print("|---|---:|---:|---:|")
for k in keys:
    x, y = med[ma][k], med[mb][k]
    print(f"| {k} | {x:.2f} | {y:.2f} | {x / y:.3f} |" if y else f"| {k} | {x} | {y} | |")
PY
