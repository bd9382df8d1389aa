#!/bin/bash
# Two radixserve builds at int4 in two layouts, beside llama-server on Q4_0, VmRSS after the
# same requests and an idle wait (footprint.sh's rows): the 64-weight blocks (layers and int8
# head; the default until 2026-11-30) and the lean ones (128-weight layers, 256-weight head;
# the default since), each set by flags, so that a build of either day runs both; cached starts,
# A then B per layout, one llama-server start per round, one server at a time.
# (docs/benchmarks/journal/2026-11-30e-idle-heap.md, 2026-11-30h-int4-blocks-128.md)
#
#   bench/memory/lean-ab.sh JAR_A JAR_B MODEL_DIR Q4_0_GGUF [ROUNDS] [IDLE_S]
#   LLAMA_SERVER: the llama-server binary (default /work/llamacpp/src/build/bin/llama-server)
set -u
jar_a=$1
jar_b=$2
model=$3
gguf=$4
rounds=${5:-3}
idle=${6:-10}
here=$(cd "$(dirname "$0")" && pwd)
llama=${LLAMA_SERVER:-/work/llamacpp/src/build/bin/llama-server}
cache=$(mktemp -d /tmp/lean-ab-weights-XXXX)
trap 'rm -rf "$cache"' EXIT
rs() { # jar, then serve flags
  local jar=$1
  shift
  JAVA_OPTS=-Xmx2g IDLE_S=$idle "$here/footprint.sh" "$jar" "$model" int4 \
    --kv-cache-dtype bfloat16 --weights-cache "$cache" "$@" | tr '\n' ' '
}
b64="--quantization-block-size 64 --quantization-head-block-size 64"
lean="--quantization-block-size 128 --quantization-head-block-size 256"
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores; $(uptime)"
echo "# A: $jar_a; B: $jar_b; b64: $b64; lean: $lean"
# shellcheck disable=SC2086
rs "$jar_a" $b64 > /dev/null && rs "$jar_a" $lean > /dev/null  # the weights cache's first starts
for r in $(seq "$rounds"); do
  for layout in b64 lean; do
    flags=$b64
    [ "$layout" = lean ] && flags=$lean
    # shellcheck disable=SC2086
    echo "| A $layout $(rs "$jar_a" $flags)"
    # shellcheck disable=SC2086
    echo "| B $layout $(rs "$jar_b" $flags)"
  done
  echo "| llama-server $(IDLE_S=$idle "$here/footprint.sh" "$llama" "$gguf" q4_0 -c 8192 | tr '\n' ' ')"
done
echo "# end: $(date -u +%FT%TZ) $(uptime)"
