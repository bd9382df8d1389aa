#!/usr/bin/env bash
# llama.cpp's llama-server on the same 1B weights as radixserve's speculative benchmark, without
# and with its n-gram speculation (--spec-type ngram-simple, 3-token keys, drafts of up to 8:
# the closest of its modes to radixserve's prompt lookup), on the same workloads
# (workloads.py: token-id prompts, so the GGUF's vocabulary text does not matter, only the ids),
# then the ratio ngram / off per round and the median (ratios.py). With RADIXSERVE=JAR, the
# radixserve variants (off, ngram) run in the same rounds, interleaved, for the side by side.
#
#   bench/speculative/llamacpp.sh OUT [ROUNDS]
#     env: GGUF (default /work/mem2-gguf/llama1b-q8_0.gguf; made from MODEL_DIR with
#     convert_q8.py when missing), MODEL_DIR (/work/bench-1b), RADIXSERVE (a radixserve jar:
#     also run rs-off and rs-ngram), LLAMA_ARGS (e.g. "--poll 0": on a loaded machine
#     llama.cpp's spinning threads lose their cores), and run.sh's (THREADS, DECODE, CONTEXT,
#     WORKLOADS, REASK)
set -eu
out=$1
rounds=${2:-1}
here=$(cd "$(dirname "$0")" && pwd)
lcpp=${LLAMA_CPP:-/work/llamacpp/src}
model=${MODEL_DIR:-/work/bench-1b}
export GGUF=${GGUF:-/work/mem2-gguf/llama1b-q8_0.gguf}
if [ ! -f "$GGUF" ]; then
  # r50k_base's tokenizer files beside a link to the weights, then llama.cpp's converter
  src=$(dirname "$GGUF")/src
  mkdir -p "$src"
  for f in config.json generation_config.json model.safetensors; do
    ln -sf "$model/$f" "$src/$f"
  done
  python3 "$here/../llamacpp/gpt2_tokenizer_files.py" "$src"
  python3 "$here/convert_q8.py" "$lcpp" "$src" "$GGUF"
fi
variants="lc-off lc-ngram"
jar=${RADIXSERVE:-none}
[ "$jar" != none ] && variants="rs-off rs-ngram $variants"
"$here/run.sh" "$model" "$jar" "$out" "$rounds" $variants
