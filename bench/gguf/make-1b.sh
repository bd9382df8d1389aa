#!/bin/sh
# The Llama-3.2-1B-shaped GGUF files bench/gguf/compare.sh serves, made by llama.cpp's own tools
# from a transformers-written bf16 checkpoint (HF_DIR: config.json + model.safetensors, e.g.
# LlamaForCausalLM(LlamaConfig(...Llama 3.2 1B's shape...)).save_pretrained, see
# docs/benchmarks/journal/2026-11-28-gguf.md): the checkpoint has no tokenizer files, so Llama 3's
# tokenizer is written beside it from llama.cpp's models/ggml-vocab-llama-bpe.gguf
# (llama3_tokenizer_files.py); convert_hf_to_gguf.py --outtype bf16, then llama-quantize to Q8_0,
# Q4_0 and Q4_K_M.
#
#   bench/gguf/make-1b.sh HF_DIR OUT [LLAMACPP_SRC]      (default /work/llamacpp/src)
set -eu
hf=$1
out=$2
src=${3:-/work/llamacpp/src}
here=$(cd "$(dirname "$0")" && pwd)
# build.sh's venv (torch, sentencepiece) for the converter, where it is
py=${PYTHON:-python3}
[ -n "${PYTHON:-}" ] || [ ! -x "$src/../venv/bin/python" ] || py=$src/../venv/bin/python
mkdir -p "$out/hf"
for f in config.json generation_config.json model.safetensors model.safetensors.index.json \
    $(cd "$hf" && ls model-*-of-*.safetensors 2> /dev/null); do
  [ -f "$hf/$f" ] && ln -sf "$(cd "$hf" && pwd)/$f" "$out/hf/$f"
done
"$py" "$here/llama3_tokenizer_files.py" "$src" "$out/hf"
[ -f "$out/llama1b-bf16.gguf" ] || (cd "$src" && "$py" convert_hf_to_gguf.py "$out/hf" \
  --outtype bf16 --outfile "$out/llama1b-bf16.gguf")
for q in Q8_0 Q4_0 Q4_K_M; do
  lower=$(echo "$q" | tr 'A-Z' 'a-z')
  [ -f "$out/llama1b-$lower.gguf" ] || "$src/build/bin/llama-quantize" "$out/llama1b-bf16.gguf" \
    "$out/llama1b-$lower.gguf" "$q" 2
done
ls -la "$out"
