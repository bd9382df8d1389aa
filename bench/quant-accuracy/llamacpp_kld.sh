#!/bin/sh
# llama.cpp's own accuracy figures for a model train_tiny_gpt2.py wrote, on the positions
# accuracy.py scores: the model converted to GGUF F32 (convert_hf_to_gguf.py, through
# gguf_convert.py), quantized to Q8_0 and Q4_0 (llama-quantize), then `llama-perplexity -c CTX
# --chunks N` on its heldout.txt: F32 once with --kl-divergence-base, each quantized file with
# --kl-divergence against it. Prints llama-perplexity's summary (mean ln(PPL(Q)/PPL(base)),
# KLD, RMS Δp, "Same top p") per type.
#
#   bench/quant-accuracy/llamacpp_kld.sh MODEL_DIR OUT [CTX=128] [CHUNKS=300]
#   QUANTS: the types to quantize to and measure (default "Q8_0 Q4_0"; e.g. add Q4_K_M)
#
# Needs bench/llamacpp/build.sh's llama.cpp (LLAMACPP, default /work/llamacpp: src/ with
# build/bin/llama-perplexity and llama-quantize) and a Python with the converter's packages
# (PYTHON, default LLAMACPP's venv/bin/python, else python3).
set -eu
model=$(cd "$1" && pwd)
out=$2
ctx=${3:-128}
chunks=${4:-300}
lc=${LLAMACPP:-/work/llamacpp}
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-$lc/venv/bin/python}
[ -x "$py" ] || py=python3
quants=${QUANTS:-Q8_0 Q4_0}
name=$(basename "$model")
mkdir -p "$out/$name-src"
for f in "$model"/*; do
  [ "$(basename "$f")" = config.json ] || ln -sf "$f" "$out/$name-src/"
done
"$py" -c "
import json, sys
c = json.load(open('$model/config.json'))
c.setdefault('n_ctx', c['n_positions'])
json.dump(c, open('$out/$name-src/config.json', 'w'), indent=1)"
[ -f "$out/$name-f32.gguf" ] || "$py" "$here/gguf_convert.py" "$lc/src" \
  "$out/$name-src" -- "$out/$name-src" --outtype f32 --outfile "$out/$name-f32.gguf" > "$out/convert.log" 2>&1
for q in $quants; do
  lower=$(echo "$q" | tr 'A-Z' 'a-z')
  "$lc/src/build/bin/llama-quantize" "$out/$name-f32.gguf" "$out/$name-$lower.gguf" "$q" 1 \
    > "$out/quantize-$lower.log" 2>&1
done
# --no-repack: llama.cpp's AMX repack of quantized blocks dies with SIGILL on this CPU
ppl="$lc/src/build/bin/llama-perplexity -f $model/heldout.txt -c $ctx --chunks $chunks -t 1 --no-repack"
$ppl -m "$out/$name-f32.gguf" --kl-divergence-base "$out/$name-base.kld" > "$out/f32.log" 2>&1
grep 'Final estimate' "$out/f32.log"
for q in $(echo "$quants" | tr 'A-Z' 'a-z'); do
  echo "== $name $q"
  $ppl -m "$out/$name-$q.gguf" --kl-divergence-base "$out/$name-base.kld" --kl-divergence \
    > "$out/$q.log" 2>&1
  grep -E 'Mean PPL|Mean ln\(PPL|Mean +KLD|RMS Δp|Same top p' "$out/$q.log"
done
