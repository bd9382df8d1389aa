#!/bin/bash
# How often a server's steps wait on the disk for the rows it reads by token id (the embedding
# table stays in the weights file, read by row: docs/memory.md). One server start on MODEL, then
# the server's major page faults (/proc/PID/stat) over three greedy 200-token decodes of random
# 16-token prompts and one 512-token prefill of random ids; the requests' rates and the first
# characters of each answer (the same seed gives the same prompts, so two builds' answers compare).
# One line: "LABEL majflt +N" and the requests' figures
# (docs/benchmarks/journal/2026-12-01b-q4_0-decode-step.md).
#
#   bench/memory/row-faults.sh JAR MODEL LABEL [extra serve flags...]   (PORT=8124, THREADS=2)
set -u
jar=$1
model=$2
label=$3
shift 3
port=${PORT:-8124}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/.ci/java-home.sh"
java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Xmx2g -jar "$jar" \
  serve --model "$model" --host 127.0.0.1 --port "$port" --threads "${THREADS:-2}" \
  --speculative off "$@" > "/tmp/row-faults-$label.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 1 300); do
  curl -sf "localhost:$port/health" > /dev/null && break
  sleep 1
done
majflt() { awk '{print $12}' "/proc/$pid/stat"; }
before=$(majflt)
figures=$(PORT=$port MODEL_NAME=$(basename "$model") python3 - <<'PY'
import json, os, random, time, urllib.request

url = f"http://127.0.0.1:{os.environ['PORT']}/v1/completions"
model = os.environ["MODEL_NAME"]
random.seed(7)


def post(body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=600))


out = []
for _ in range(3):
    t = time.time()
    r = post({"model": model, "prompt": [random.randrange(50000) for _ in range(16)],
              "max_tokens": 200, "temperature": 0, "ignore_eos": True})
    out.append(f"{200 / (time.time() - t):.1f} tok/s {r['choices'][0]['text'][:24]!r}")
t = time.time()
post({"model": model, "prompt": [random.randrange(120000) for _ in range(512)], "max_tokens": 1,
      "temperature": 0})
out.append(f"512-token prefill {time.time() - t:.2f} s")
print("; ".join(out))
PY
)
echo "$label majflt +$(($(majflt) - before)); $figures"
