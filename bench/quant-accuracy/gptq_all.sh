#!/usr/bin/env bash
# GPTQ and round-to-nearest checkpoints of the two trained GPT-2s (docs/benchmarks/journal/2026-11-21-to-28.md, "GPTQ
# checkpoints against radixserve's own rounding"), then the torch-side check of each:
# usage: gptq_all.sh OUT [PYTHON]   (PYTHON: one with torch, transformers, tokenizers, safetensors)
# Writes OUT/<model>-<variant>/ (a GPTQ v1 model directory), OUT/runs.log, OUT/check.log.
set -euo pipefail
out=$1; py=${2:-python3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: > "$out/runs.log"
dirs=()
for pair in 6x384:/work/gpt2-6x384 4x256:/work/tiny-gpt2; do
  name=${pair%%:*}; src=${pair#*:}
  for v in "gptq-g128|--group-size 128" "gptq-g32|--group-size 32" \
           "gptq-g128-act|--group-size 128 --act-order" "rtn-g128|--group-size 128 --rtn" \
           "rtn-g32|--group-size 32 --rtn"; do
    tag=${v%%|*}; flags=${v#*|}
    dir=$out/$name-$tag
    rm -rf "$dir" "$dir.loop.safetensors"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$py" "$here/gptq_quantize.py" "$src" "$dir" $flags --dtype float32 --no-check \
      > "$dir.log" 2>&1
    echo "$name-$tag $flags $(echo "$(date +%s.%N) - $start" | bc) s" >> "$out/runs.log"
    dirs+=("$dir")
  done
done
"$py" "$here/check_gptq.py" "${dirs[@]}" > "$out/check.log" 2>&1
