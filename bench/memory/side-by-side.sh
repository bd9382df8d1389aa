#!/bin/bash
# radixserve against llama.cpp's llama-server on the same weights, one run, one machine, starts
# interleaved: radixserve int8 / int4 against GGUF Q8_0 / Q4_0, with the same context budget
# (8,192 tokens of 16-bit KV: llama-server -c 8192 (f16); radixserve --kv-cache-memory 256m
# --kv-cache-dtype bfloat16 on the 1B shape: the same bytes, and on the CPU the faster 16-bit
# pool, docs/quantization.md). radixserve keeps its weights file in a cache
# (--weights-cache): its first start writes it (reported as "first"), the measured starts map it
# from a warm page cache, as llama-server maps its GGUF. Rows as footprint.sh prints them.
#
#   bench/memory/side-by-side.sh JAR MODEL_DIR GGUF_DIR [ROUNDS]
#   GGUF_DIR holds llama1b-q8_0.gguf and llama1b-q4_0.gguf, made from MODEL_DIR with
#   llama.cpp's convert_hf_to_gguf.py (--outtype bf16) and llama-quantize (Q8_0, Q4_0).
#   LLAMA_SERVER: the llama-server binary (default /work/llamacpp/src/build/bin/llama-server).
set -eu
jar=$1
model=$2
gguf=$3
rounds=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
llama=${LLAMA_SERVER:-/work/llamacpp/src/build/bin/llama-server}
cache=$(mktemp -d /tmp/side-by-side-weights-XXXX)
trap 'rm -rf "$cache"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores; $(uptime)"
echo "| server | mode | ready | VmHWM | VmRSS at ready | VmRSS | RssAnon | RssFile | heap | decode | load |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
rs() { JAVA_OPTS=-Xmx2g "$here/footprint.sh" "$jar" "$model" "$1" --kv-cache-dtype bfloat16 \
  --weights-cache "$cache"; }
for mode in int8 int4; do
  echo "| radixserve (first) $(rs $mode)"
done
for r in $(seq "$rounds"); do
  for pair in int8:q8_0 int4:q4_0; do
    echo "| radixserve $(rs "${pair%%:*}")"
    echo "| llama-server $("$here/footprint.sh" "$llama" "$gguf/llama1b-${pair##*:}.gguf" \
      "${pair##*:}" -c 8192)"
  done
done
echo "# cache: $(du -sh "$cache" | cut -f1) in $(ls "$cache" | wc -l) files; $(uptime)"
