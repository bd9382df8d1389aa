#!/bin/bash
# The 4-bit matmuls of a Llama-3.2-1B decode step, one engine at a time on the same cores
# (journal 2026-12-02b): llama.cpp's ggml (Q4_0 repacked, as llama-server's default, and plain,
# as --no-repack; the tied table's Q6_K), ONNX Runtime's MatMulNBits as radixserve serves a Q4_0
# file (1.29, radixserve's own, through MatMulNBitsRun.java; blocks of 32 at M = 1 and 2, the
# int8 head in blocks of 256) and the Java Vector API kernel of Q40Gemv.java. Everything prints
# to stdout with `uptime` before and after.
#
#   bench/kernels/run.sh [THREADS="1 2"] [LLAMACPP_SRC=/work/llamacpp/src] [PYTHON=python3]
#
# Needs llama.cpp built by bench/llamacpp/build.sh, onnxruntime + onnx + numpy for PYTHON (to
# write the graphs), and radixserve built once (its ONNX Runtime jar in ~/.m2).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
src=${LLAMACPP_SRC:-/work/llamacpp/src}
threads=${THREADS:-"1 2"}
py=${PYTHON:-python3}
. "$repo/.ci/java-home.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ort_jar=$(ls ~/.m2/repository/com/microsoft/onnxruntime/onnxruntime/*/onnxruntime-*.jar | grep -v sources | tail -1)
cc -O2 -I "$src/ggml/include" "$here/ggml_matmul_bench.c" -L "$src/build/bin" -lggml -lggml-base \
  -lggml-cpu -Wl,-rpath,"$src/build/bin" -lm -o "$work/ggml_matmul_bench"
SAVE="$work/graphs" "$py" "$here/mlas_q4_bench.py"
date -u
uptime
shapes="2048:2048 2048:512 2048:8192 8192:2048"
for t in $threads; do
  echo "== $t thread(s)"
  for s in $shapes; do
    k=${s%:*} n=${s#*:}
    "$work/ggml_matmul_bench" "$k" "$n" 1 "$t" 1 2> /dev/null
    "$work/ggml_matmul_bench" "$k" "$n" 1 "$t" 0 2> /dev/null
    java --add-modules jdk.incubator.vector "$here/Q40Gemv.java" "$k" "$n" "$t" 3000 2>&1 | grep -v WARNING
  done
  "$work/ggml_matmul_bench" 2048 128256 1 "$t" 0 30 q6_k 2> /dev/null
  java -cp "$ort_jar" "$here/MatMulNBitsRun.java" "$work/graphs" "$t" 2>&1 | grep -v WARNING
done
date -u
uptime
