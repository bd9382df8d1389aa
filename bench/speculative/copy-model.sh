#!/usr/bin/env bash
# First-time summarise-with-quotes and code edit on a model that copies: the small Llama that
# train_copy_llama.py trains on one CPU thread (~25 min), served by radixserve at fp32,
# speculation off against ngram, each workload on servers of its own (so /metrics gives each
# workload's acceptance by draft position), rounds interleaved; then ratios.py per workload.
# With LLAMA=1, llama.cpp's llama-server on the same weights (an f32 GGUF made with llama.cpp's
# converter, convert_q8.py) without and with its n-gram speculation runs in the same rounds:
# the variants of llamacpp.sh, on this model.
#
#   bench/speculative/copy-model.sh JAR OUT [ROUNDS]
#     env: MODEL (/work/spec-copy-model2; trained first when missing), CONTEXT (150 tokens:
#     the model trained on documents of 200-500 characters and 4-12 code lines; 1500, the
#     issue's, for a model trained on long rows: train_copy_llama.py --init, journal
#     2026-11-29d-speculative-long-context.md), DECODE (96),
#     THREADS (2), LLAMA (0), GGUF (MODEL.GGUF_TYPE.gguf, made when missing), GGUF_TYPE (f32),
#     LLAMA_ARGS, MODEL_ARGS (radixserve's model flags: --quantization none), COPY_WORKLOADS
#     (summarise-with-quotes code-edit control), WARM (0: each server fresh; N: each server first
#     answers N requests of other documents, unmeasured, as a server in use has: workloads.py),
#     RS_VARIANTS (rs-off rs-ngram; with JAR2 set, e.g. rs-off rs-ngram rs2-ngram: run.sh),
#     ENDS (1: the greedy answers stop at the model's end of text, workloads.py), WARMUP
#     (workloads.py's unmeasured first request, tokens)
# The 1B-shaped run (issue 43's goal shape): embed_copy_1b.py writes the small model into the
# Llama-3.2-1B shape, then
#   MODEL=DIR MODEL_ARGS="--quantization int8" GGUF_TYPE=q8_0 LLAMA=1 \
#     COPY_WORKLOADS="summarise-with-quotes code-edit" copy-model.sh JAR OUT 3
# A 2-layer, 128-wide model's step is bound by fixed per-step costs (the runtime call, the
# engine, streaming), not by reading weights as a 1B model's is: its ratios say what drafting
# accepts, not what it saves on a weight-bound model (journal 2026-11-28c-speculative-copy.md).
set -eu
jar=$1
out=$2
rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
model=${MODEL:-/work/spec-copy-model2}
model=${model%/}
[ -f "$model/model.safetensors" ] || python3 "$here/train_copy_llama.py" "$model" --minutes 25
export TOKENIZER_DIR=$model CONTEXT=${CONTEXT:-150} DECODE=${DECODE:-96}
export MODEL_ARGS=${MODEL_ARGS:---quantization none}
variants=${RS_VARIANTS:-rs-off rs-ngram}
if [ "${LLAMA:-0}" = 1 ]; then
  gguf_type=${GGUF_TYPE:-f32}
  export GGUF=${GGUF:-$model.$gguf_type.gguf}
  [ -f "$GGUF" ] || python3 "$here/convert_q8.py" "${LLAMA_CPP:-/work/llamacpp/src}" "$model" \
    "$GGUF" "$gguf_type"
  variants="$variants lc-off lc-ngram"
fi
for w in ${COPY_WORKLOADS:-summarise-with-quotes code-edit control}; do
  echo "== $w"
  WORKLOADS=$w "$here/run.sh" "$model" "$jar" "$out/$w" "$rounds" $variants
done
