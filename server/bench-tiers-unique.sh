#!/usr/bin/env bash
# What offloading costs when nothing comes back (docs/benchmarks/journal/2026-11-21-to-28.md, "Cache tiers at 0 % reuse"):
# the `unique` workload (every prompt distinct, 128 x 256-token prompts = twice the pool, so
# every request evicts and every eviction is offloaded) with the tiers off, host memory, and disk,
# interleaved: REPS rounds, each running the three in a rotated order, one server at a time on a
# loopback port. Prints each run and the per-round ratios host/off, disk/off: total tok/s, and
# the server process's CPU seconds over the run (utime + stime from /proc: robust to the load of
# a shared machine, where wall-clock throughput is not), and the engine thread's offload share.
# MODES="off host disk disk-all" adds the disk tier with --kv-offload-disk-write all (`disk` runs
# the default, reused); the per-run disk tier's stored blocks come from /metrics.
#   ./mvnw -B -ntp -q -pl server -am -DskipTests package && server/bench-tiers-unique.sh [OUT] [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/java-home.sh
JAR=${JAR:-server/target/radixserve.jar}
OUT=${1:-bench-out/tiers-unique}
REPS=${2:-3}
PORT=${PORT:-8131}
POOL=960   # blocks of 16: 15,360 tokens, half of the workload's prompts
mkdir -p "$OUT"
DIR=$(mktemp -d /tmp/radixserve-tiers.XXXXXX)
pid=
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi; }
trap 'stop; rm -rf "$DIR"' EXIT
serve() {  # serve NAME ARGS...
  local name=$1; shift
  java --add-modules jdk.incubator.vector -jar "$JAR" serve --host 127.0.0.1 --port "$PORT" \
    --num-blocks $POOL "$@" >> "$OUT/$name.log" 2>&1 & pid=$!
  for _ in $(seq 240); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && return; sleep 0.5; done
  echo "server $name did not start" >&2; exit 1
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }  # the server's utime + stime
read -r -a modes <<< "${MODES:-off host disk}"
n=${#modes[@]}
for rep in $(seq "$REPS"); do
  for k in $(seq 0 $(( n - 1 ))); do
    mode=${modes[$(( (k + rep - 1) % n ))]}
    case $mode in
      off) serve "$mode-$rep" ;;
      host) serve "$mode-$rep" --kv-offload-memory 1g ;;
      disk) rm -rf "$DIR/disk"; serve "$mode-$rep" --kv-offload-dir "$DIR/disk" --kv-offload-disk-size 2g ;;
      disk-all) rm -rf "$DIR/disk"; serve "$mode-$rep" --kv-offload-dir "$DIR/disk" \
        --kv-offload-disk-size 2g --kv-offload-disk-write all ;;
    esac
    echo "round $rep: $mode ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
    cpu0=$(cpu_ticks)
    java --add-modules jdk.incubator.vector -jar "$JAR" bench --url "http://127.0.0.1:$PORT" \
      --workload unique --num-requests 128 --max-tokens 8 --seed "$rep" --concurrency 4 \
      --warmup 4 --quiet --output "$OUT/$mode-$rep.json" > "$OUT/$mode-$rep.txt"
    echo $(( $(cpu_ticks) - cpu0 )) > "$OUT/$mode-$rep.cpu"
    curl -s "http://127.0.0.1:$PORT/metrics" | grep '^radixserve_kv_tier' > "$OUT/$mode-$rep.metrics" || true
    stop
  done
done
python3 - "$OUT" "$REPS" "${modes[@]}" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
others = [m for m in sys.argv[3:] if m != "off"]
def tput(mode, rep):
    s = json.load(open(f"{out}/{mode}-{rep}.json"))["runs"][0]["summary"]
    return s["totalTokenThroughput"]
def offload_share(mode, rep):
    # engine-thread seconds spent offloading / the run's wall time (warm-up requests included)
    d = json.load(open(f"{out}/{mode}-{rep}.json"))["runs"][0]["summary"]["durationS"]
    for line in open(f"{out}/{mode}-{rep}.metrics"):
        if line.startswith("radixserve_kv_tier_offload_seconds_total"):
            return float(line.split()[-1]) / d
    return float("nan")
def disk_stored(mode, rep):
    for line in open(f"{out}/{mode}-{rep}.metrics"):
        if line.startswith('radixserve_kv_tier_stored_blocks_total{tier="disk"'):
            return int(float(line.split()[-1]))
    return None
def cpu(mode, rep):
    return int(open(f"{out}/{mode}-{rep}.cpu").read()) / 100  # clock ticks
ratios = {m: [] for m in others}
cpus = {m: [] for m in others}
shares = {m: [] for m in others}
for rep in range(1, reps + 1):
    off = tput("off", rep)
    row = [f"round {rep}: off {off:.0f} tok/s {cpu('off', rep):.1f} CPU s"]
    for m in ratios:
        t = tput(m, rep)
        ratios[m].append(t / off)
        shares[m].append(offload_share(m, rep))
        cpus[m].append(cpu(m, rep) / cpu("off", rep))
        row.append(f"{m} {t:.0f} ({t / off:.3f}x) {cpu(m, rep):.1f} CPU s ({cpus[m][-1]:.3f}x),"
                   f" offload {100 * shares[m][-1]:.2f} % of the run"
                   + ("" if disk_stored(m, rep) is None
                      else f", {disk_stored(m, rep)} blocks to disk"))
    print(", ".join(row))
for m, r in ratios.items():
    c = cpus[m]
    print(f"{m}/off: tok/s median {statistics.median(r):.3f}x (min {min(r):.3f}x, max"
          f" {max(r):.3f}x); CPU s median {statistics.median(c):.3f}x (min {min(c):.3f}x, max"
          f" {max(c):.3f}x); offload share median {100 * statistics.median(shares[m]):.2f} %")
PY
