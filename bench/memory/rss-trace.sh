#!/bin/bash
# RSS over a server's start, every 0.5 s until /health answers (then once more 3 s later): VmHWM,
# VmRSS, RssAnon and RssFile from /proc/PID/status, in MiB, one line per sample. Shows in which
# phase of a load the peak falls (docs/benchmarks/journal/2026-11-28d-int8-blocks.md).
#
#   bench/memory/rss-trace.sh JAR MODEL none|int8|int4|auto [extra serve flags...]
#   (a first start: give --weights-cache an empty directory, or none; the log goes to
#   /tmp/rss-trace-$$.log)
set -u
jar=$1
model=$2
mode=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../.ci/java-home.sh"
java=java
[ -z "${JAVA_HOME:-}" ] || java="$JAVA_HOME/bin/java"
port=$((20000 + RANDOM % 20000))
log=/tmp/rss-trace-$$.log
# the launcher's JVM flags (./radixserve)
"$java" --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Xmx2g \
  -XX:G1PeriodicGCInterval=5000 -jar "$jar" serve --model "$model" --host 127.0.0.1 \
  --port "$port" --threads 2 --kv-cache-memory 256m --quantization "$mode" "$@" > "$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null' EXIT
sample() {
  awk '/^(VmHWM|VmRSS|RssAnon|RssFile):/ {printf "%s %d MiB  ", $1, $2 / 1024}' \
    "/proc/$pid/status"
  echo
}
t0=$(date +%s.%N)
while kill -0 "$pid" 2>/dev/null; do
  awk -v now="$(date +%s.%N)" -v t0="$t0" 'BEGIN { printf "%6.1f s  ", now - t0 }'
  sample
  if curl -sf "127.0.0.1:$port/health" > /dev/null; then
    echo ready
    sleep 3
    printf 'ready + 3 s  '
    sample
    exit 0
  fi
  sleep 0.5
done
echo "server exited, see $log" >&2
exit 1
