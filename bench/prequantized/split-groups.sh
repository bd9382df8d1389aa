#!/usr/bin/env bash
# One GPTQ/AWQ checkpoint served by two builds, one server at a time: BEFORE serves its groups of
# 128 as MatMulNBits blocks of 128, AFTER splits each into four blocks of 32 with the group's scale
# and zero point (2026-11-29, docs/benchmarks/journal/2026-11-29-gptq-chunk-bits.md). Measures
#  - memory: bench/memory/footprint.sh, --quantization auto (as a user leaves it), 2 threads;
#  - speed: bench/prequantized/compare.sh, batch-1 decode (128 tokens) and 512-token prefill,
#    one thread, ROUNDS interleaved rounds;
# and prints the ratios AFTER / BEFORE (the medians of the rounds). Writes OUT/.
#
# usage: split-groups.sh JAR_BEFORE JAR_AFTER CHECKPOINT_DIR OUT [ROUNDS (default 3)]
#   e.g. split-groups.sh /work/jars/main-8801a2c.jar server/target/radixserve.jar \
#        /work/gptq-1b-g128 /tmp/split 3
# (a GPTQ checkpoint of a Llama's shape: bench/memory/gptq_checkpoint.py SRC OUT)
set -euo pipefail
before=$1; after=$2; model=$3; out=$4; rounds=${5:-3}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../.ci/java-home.sh"
[ -z "${JAVA_HOME:-}" ] || export PATH="$JAVA_HOME/bin:$PATH"
mkdir -p "$out"
{ date -u; uptime; nproc; } > "$out/machine.txt"
for side in before after; do
  jar=$before; [ $side = after ] && jar=$after
  echo "| $side $(bash "$here/../memory/footprint.sh" "$jar" "$model" auto | tail -1 | cut -c2-)" \
    | tee "$out/footprint-$side.md"
done
rm -f "$out/results.jsonl"
bash "$here/compare.sh" "$out" "$rounds" "before@$before=$model" "after@$after=$model"
uptime >> "$out/machine.txt"
python3 - "$out" <<'EOF'
import json, re, statistics, sys
out = sys.argv[1]
rows = [json.loads(l) for l in open(f"{out}/results.jsonl")]
def med(name, key):
    return statistics.median(r[key] for r in rows if r["name"] == name)
def rss(side):  # VmRSS after footprint.sh's requests, MiB (its 5th column: | mode | ready |
    # VmHWM | VmRSS at ready | VmRSS | ...)
    cells = [c.strip() for c in open(f"{out}/footprint-{side}.md").read().split("|")]
    return float(re.sub("[^0-9.]", "", cells[5]))
keys = [k for k in rows[0] if "_tok_" in k]
for k in keys:
    b, a = med("before", k), med("after", k)
    print(f"{k}: before {b:.1f}, after {a:.1f}, after/before {a / b:.3f}")
print(f"VmRSS (footprint.sh, MiB): before {rss('before'):.0f}, after {rss('after'):.0f},"
      f" after/before {rss('after') / rss('before'):.3f}, +{rss('after') - rss('before'):.0f} MiB")
print(open(f"{out}/machine.txt").read().strip())
EOF
