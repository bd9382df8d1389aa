#!/bin/bash
# glibc's malloc arenas: MALLOC_ARENA_MAX=2 against the default (8 per core), radixserve alone on
# the 1B shape at int4 and int8, its weights file cached (a first start writes it), starts
# interleaved; rows as footprint.sh prints them, prefixed by the variant
# (docs/benchmarks/journal/2026-11-29c-malloc-arenas.md).
#
#   bench/memory/arenas.sh JAR MODEL_DIR [ROUNDS]
set -eu
jar=$1
model=$2
rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
cache=$(mktemp -d /tmp/arenas-weights-XXXX)
trap 'rm -rf "$cache"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores; $(uptime)"
fp() { JAVA_OPTS=-Xmx2g "$here/footprint.sh" "$jar" "$model" "$1" --kv-cache-dtype bfloat16 \
  --weights-cache "$cache"; }
for mode in int4 int8; do
  echo "first $(fp $mode)"
  for _ in $(seq "$rounds"); do
    echo "default $(fp $mode)"
    echo "arenas-2 $(MALLOC_ARENA_MAX=2 fp $mode)"
  done
done
