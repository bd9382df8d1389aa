#!/bin/bash
# Prefill attention of two builds of the CPU kernel, side by side: KernelBench (the kernel alone,
# no ONNX Runtime) for one sequence of CONTEXT cached tokens taking a 512-token prefill chunk, at
# the 8B shape (32 query heads over 8 kv heads of 128) and the 1B shape (32 over 8, of 64), KV
# int8 and float32, one thread (thread CPU time, -Dbench.clock=cpu, so that a busy machine's
# descheduling stays out) and two (wall clock). Each case runs OLD then NEW then OLD then NEW, one
# JVM each; prints the p50 ms per layer of each run's last round and NEW's speedup (old / new,
# the mean of the two pairs). (docs/benchmarks/journal/2026-11-28d-prefill-attention.md)
#
#   bench/attention/prefill-ab.sh OLD_CP NEW_CP
#   OLD_CP, NEW_CP: model-runtime's classes:test-classes of each build (KernelBench is a test
#     class), e.g. /tmp/old/classes:/tmp/old/test-classes
#   CONTEXTS (default "4096 12288"), SHAPES ("8b 1b"), KVS ("int8 float32"), THREADS ("1 2"),
#   REPS (3), NEW_TOKENS (512): the grid
set -eu
old=$1
new=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=/dev/null
source "$root/.ci/java-home.sh"
deps=$(mktemp /tmp/prefill-ab-cp-XXXX)
trap 'rm -f "$deps"' EXIT
(cd "$root" && ./mvnw -B -ntp -o -q -pl model-runtime dependency:build-classpath \
  -Dmdep.outputFile="$deps" > /dev/null)
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "# load: $(uptime)"
echo "# old: $old"
echo "# new: $new"
printf '%-4s %-7s %7s %3s %10s %10s %10s %10s %8s\n' shape kv context thr old1_ms new1_ms old2_ms \
  new2_ms speedup
bench() { # classes shape kv context threads -> p50 ms per layer of the last round
  local heads=32 kvHeads=8 headSize=128 clock=()
  if [ "$2" = 1b ]; then headSize=64; fi
  if [ "$5" = 1 ]; then clock=(-Dbench.clock=cpu); fi
  java --add-modules jdk.incubator.vector "${clock[@]}" -Dbench.layers=1 -Dbench.kv="$3" \
    -cp "$1:$(cat "$deps")" dev.radixserve.model.attention.KernelBench "$5" 1 "$4" $heads \
    "$headSize" "${REPS:-3}" "${NEW_TOKENS:-512}" $kvHeads 2> /dev/null \
    | grep 'ms per layer' | tail -1 | sed -E 's/.*: ([0-9.]+) ms per layer.*/\1/'
}
for shape in ${SHAPES:-8b 1b}; do
  for kv in ${KVS:-int8 float32}; do
    for context in ${CONTEXTS:-4096 12288}; do
      for threads in ${THREADS:-1 2}; do
        o1=$(bench "$old" "$shape" "$kv" "$context" "$threads")
        n1=$(bench "$new" "$shape" "$kv" "$context" "$threads")
        o2=$(bench "$old" "$shape" "$kv" "$context" "$threads")
        n2=$(bench "$new" "$shape" "$kv" "$context" "$threads")
        printf '%-4s %-7s %7s %3s %10s %10s %10s %10s %7.2fx\n' "$shape" "$kv" "$context" \
          "$threads" "$o1" "$n1" "$o2" "$n2" \
          "$(python3 -c "print(($o1 / $n1 + $o2 / $n2) / 2)")"
      done
    done
  done
done
echo "# end load: $(uptime)"
