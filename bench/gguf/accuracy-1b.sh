#!/bin/bash
# What serving a GGUF file costs in accuracy against the file's own weights, at the 1B size:
# GgufAgreementBench --vs-exact per file (model-runtime's test-side tool): the file's blocks
# dequantized exactly and computed in fp32 decode STEPS greedy tokens from each prompt; the
# served route (serve's default for the file: Q8_0/Q4_0 repacked, K-quants requantized to the
# nearest mode, int8 LM head and embedding, int8 activations) is fed those tokens: mean and
# largest |Δ logprob| of the exact route's token, top-1 agreement, then tokens before the first
# divergence when it decodes freely. One file at a time, one session at a time.
#
#   bench/gguf/accuracy-1b.sh FILE.gguf... (STEPS=32; PROMPTS: the journal's four)
#
# The exact route serves the 1B at fp32: its load peaks at ~12.7 GB (issue 39's measurement), so
# each file waits for MemAvailable >= NEED_GIB (default 14) and is skipped if it never comes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo" || exit 1
. .ci/java-home.sh
steps=${STEPS:-32}
need=${NEED_GIB:-14}
[ -f model-runtime/target/cp.txt ] && [ -d model-runtime/target/test-classes ] || \
  ./mvnw -B -ntp -o -q -pl model-runtime -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
cp=model-runtime/target/classes:model-runtime/target/test-classes:$(cat model-runtime/target/cp.txt)
{ date -u; uptime; nproc; } >&2
for file in "$@"; do
  avail=0
  for _ in $(seq 1 60); do
    avail=$(awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo)
    [ "$avail" -ge "$need" ] && break
    sleep 10
  done
  if [ "$avail" -lt "$need" ]; then
    echo "$(basename "$file"): skipped, MemAvailable ${avail} GiB < ${need} GiB" >&2
    continue
  fi
  java -Xss64m -Xmx3g --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector \
    -cp "$cp" dev.radixserve.model.GgufAgreementBench --vs-exact "$file" served "$steps" \
    "${PROMPT1:-The capital of France is}" "${PROMPT2:-def fibonacci(n):}" \
    "${PROMPT3:-Once upon a time, in a land far away,}" "${PROMPT4:-1, 2, 3, 4, 5,}"
done
uptime >&2
