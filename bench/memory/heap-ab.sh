#!/bin/bash
# Committed Java heap and VmRSS of two radixserve builds (or two JVM option sets) after the same
# five requests as footprint.sh, and again after an idle wait: int4 weights, 256 MiB of bf16 KV,
# the weights from a shared --weights-cache (its first start, which writes it, is not counted).
# Starts alternate A, B, B, A, ... one server at a time; prints footprint.sh's rows and the
# medians' B/A ratios. (docs/benchmarks/journal/2026-11-28c-decode-heap.md)
#
#   bench/memory/heap-ab.sh JAR_A JAR_B MODEL_DIR [ROUNDS] [IDLE_S]
#   OPTS_A, OPTS_B: JAVA_OPTS of each side (default -Xmx2g, as side-by-side.sh);
#   DECODE_TOKENS: the fifth request's length (footprint.sh; default 64)
set -eu
jar_a=$1
jar_b=$2
model=$3
rounds=${4:-2}
idle=${5:-30}
here=$(cd "$(dirname "$0")" && pwd)
cache=$(mktemp -d /tmp/heap-ab-weights-XXXX)
out=$(mktemp /tmp/heap-ab-XXXX)
trap 'rm -rf "$cache" "$out"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores; $(uptime)"
echo "# A: $jar_a ${OPTS_A:--Xmx2g}; B: $jar_b ${OPTS_B:--Xmx2g}"
run() { # tag jar opts
  JAVA_OPTS=$3 IDLE_S=$idle "$here/footprint.sh" "$2" "$model" int4 --kv-cache-dtype bfloat16 \
    --weights-cache "$cache" | sed "s/^/$1 /" | tee -a "$out"
}
JAVA_OPTS=-Xmx2g "$here/footprint.sh" "$jar_a" "$model" int4 --weights-cache "$cache" > /dev/null
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for tag in $order; do
    if [ "$tag" = A ]; then run A "$jar_a" "${OPTS_A:--Xmx2g}"; else run B "$jar_b" "${OPTS_B:--Xmx2g}"; fi
  done
done
echo "# end: $(uptime)"
python3 - "$out" <<'PY'
import re, statistics, sys
rows = {"A": [], "B": []}
idle = {"A": [], "B": []}
for line in open(sys.argv[1]):
    tag, rest = line[0], line[2:]
    if rest.startswith("|"):
        c = [x.strip() for x in rest.strip().strip("|").split("|")]
        mib = lambda s: float(s.split()[0])
        rows[tag].append((mib(c[4]), mib(c[7]), float(c[8].split()[0])))  # VmRSS, heap, decode
    m = re.search(r"VmRSS (\d+) MiB, heap committed (\d+) MiB", rest)
    if m:
        idle[tag].append((float(m.group(1)), float(m.group(2))))
med = lambda xs, i: statistics.median(x[i] for x in xs)
for name, src, i in [("VmRSS after the requests", rows, 0), ("heap committed after the requests", rows, 1),
                     ("decode tok/s", rows, 2), ("VmRSS after idle", idle, 0), ("heap committed after idle", idle, 1)]:
    if src["A"] and src["B"]:
        a, b = med(src["A"], i), med(src["B"], i)
        print(f"{name:34s} A {a:8.1f}  B {b:8.1f}  B/A {b / a:.2f}")
PY
