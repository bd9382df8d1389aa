#!/bin/bash
# The Q8_0/Q4_0 repack's memory, two builds side by side on the same files: each build serves
# each file once (bench/memory/footprint.sh: VmHWM = peak while loading, VmRSS at ready and after
# four requests), builds interleaved, then the after/before ratios of the same run. Both with
# --quantization none (the file's own blocks; "auto" does the same, but the older build lacks it).
#
#   bench/gguf/repack-memory.sh BEFORE_JAR AFTER_JAR FILE.gguf... [ROUNDS=1]
#
# e.g. bench/gguf/repack-memory.sh /tmp/main.jar server/target/radixserve.jar \
#        /work/mem2-gguf/llama1b-q8_0.gguf /work/mem2-gguf/llama1b-q4_0.gguf
set -u
before=$1
after=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
{ date -u; uptime; nproc; } >&2
for round in $(seq 1 "${ROUNDS:-1}"); do
  for file in "$@"; do
    for build in before after; do
      jar=$before
      [ "$build" = after ] && jar=$after
      row=$(bash "$here/../memory/footprint.sh" "$jar" "$file" none) || { echo "$build on $file failed" >&2; continue; }
      echo "$(basename "$file" .gguf) $build $row" | tee -a "$rows"
    done
  done
done
uptime >&2
python3 - "$rows" <<'PY'
import sys, re, collections
mib = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    name, build, row = line.split(" ", 2)
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    # mode | ready | VmHWM | VmRSS at ready | VmRSS | RssAnon | RssFile | heap | decode | load
    nums = [float(re.match(r"[0-9.]+", c).group()) for c in cells[1:9]]
    mib[name][build].append(nums)
print("\n| file | peak (VmHWM) before → after | steady VmRSS before → after | ready s before → after |")
print("|---|---|---|---|")
for name, b in mib.items():
    if not b["before"] or not b["after"]:
        continue
    mean = lambda rows, i: sum(r[i] for r in rows) / len(rows)
    hb, ha = mean(b["before"], 1), mean(b["after"], 1)
    rb, ra = mean(b["before"], 3), mean(b["after"], 3)
    tb, ta = mean(b["before"], 0), mean(b["after"], 0)
    print(f"| {name} | {hb:.0f} → {ha:.0f} MiB ({ha / hb:.2f}x) | {rb:.0f} → {ra:.0f} MiB"
          f" ({ra / rb:.2f}x) | {tb:.1f} → {ta:.1f} |")
PY
