#!/usr/bin/env bash
# First-time summarise-with-quotes and code edit on a model that copies: the small Llama that
# train_copy_llama.py trains on the CPU (~15 min), served by radixserve at fp32, speculation
# off against ngram, each workload on servers of its own (so /metrics gives each workload's
# acceptance by draft position), rounds interleaved; then ratios.py per workload.
#
#   bench/speculative/copy-model.sh JAR OUT [ROUNDS]
#     env: MODEL (/work/spec-copy-model; trained first when missing), CONTEXT (150 tokens:
#     the model trained on documents of 250-700 characters and 6-16 code lines), DECODE (96),
#     THREADS (2)
# A 2-layer, 128-wide model's step is bound by fixed per-step costs (the runtime call, the
# engine, streaming), not by reading weights as a 1B model's is: its ratios say what drafting
# accepts, not what it saves on a weight-bound model (journal 2026-11-28b-speculative.md).
set -eu
jar=$1
out=$2
rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
model=${MODEL:-/work/spec-copy-model}
[ -f "$model/model.safetensors" ] || python3 "$here/train_copy_llama.py" "$model" --minutes 14
export TOKENIZER_DIR=$model CONTEXT=${CONTEXT:-150} DECODE=${DECODE:-96}
export MODEL_ARGS="--quantization none"
for w in summarise-with-quotes code-edit control; do
  echo "== $w"
  WORKLOADS=$w "$here/run.sh" "$model" "$jar" "$out/$w" "$rounds" rs-off rs-ngram
done
