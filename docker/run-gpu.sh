#!/usr/bin/env bash
# Runs inside an unpacked GPU payload (docker/gpu-payload.sh run calls it). Needs only bash,
# python3 and the NVIDIA driver: the Java runtime (java/), ONNX Runtime's CUDA build (ort/) and the
# CUDA 12 user-space libraries (cuda12/) come with the payload.
#
#   run-gpu.sh PAYLOAD_DIR [STEP...]
#
# First the checks, in the order a user meets them, each one line in the summary:
#   runtime  the payload's Java runs the jar
#   layout   the CUDA 12 libraries and ONNX Runtime that have arrived load (the loader, not a list)
#   tree     a payload packed with --device-tool only: the repository's working tree (the current
#            folder or one above it, or $RADIXSERVE_TREE) has the test resources the pack left to
#            it; its folders go on the tests' classpath (exit 5 when it is absent)
#   driver   libcuda.so.1 loads; else it stops: "no NVIDIA driver: libcuda.so.1 not found" (exit 3)
#   pieces   every piece has arrived; else it names the missing ones (exit 4)
# Without a driver, on a full payload, `serve --device cuda` is started too: its own preflight
# must get as far as the driver (ONNX Runtime's CUDA build, its provider and the CUDA libraries
# found through FFM), which is what a host without a GPU can prove.
# Then the STEPs (all when none are named; `check` runs none), each PASS/FAIL with its time:
#   gpu-tests gpu-tests-fpa-intb model-runtime-suite e2e serve serve-int8 serve-int4 bench-cache
# Reports go to $RADIXSERVE_GPU_REPORTS (default PAYLOAD_DIR/reports), at most 8 files, no folders,
# appended to by every call, so that one copy brings back everything run so far:
#   summary.txt gpu-tests.log decode-tables.md model-runtime-suite.log e2e.log serve.log
#   bench-cache.log bench-cache.json
# Exit status 0 only if every check and every step run passed.
set -uo pipefail
p=$(cd "${1:?usage: run-gpu.sh PAYLOAD_DIR [STEP...]}" && pwd)
shift
all=(gpu-tests gpu-tests-fpa-intb model-runtime-suite e2e serve serve-int8 serve-int4 bench-cache)
only=("$@")
for name in "${only[@]}"; do
  [[ " check ${all[*]} " == *" $name "* ]] || { echo "run-gpu.sh: no step '$name' (steps: check ${all[*]})" >&2; exit 2; }
done
[ ${#only[@]} -gt 0 ] || only=("${all[@]}")
out=${RADIXSERVE_GPU_REPORTS:-$p/../reports}
mkdir -p "$out" "$p/work"
summary="$out/summary.txt"
export LD_LIBRARY_PATH="$p/cuda12${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RADIXSERVE_ORT_LIBRARY="$p/ort/libonnxruntime.so"
java="$p/java/bin/java"
cp="$(ls "$p"/lib/junit-platform-console-standalone-*.jar 2>/dev/null):$p/lib/radixserve.jar:$p/tests/model-runtime:$p/tests/server"
jvm=(--enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector -Xmx8g
     -Dradixserve.test.device=cuda)
status=0
called_from=$PWD
cd "$p/work"

note() { echo "$*" | tee -a "$summary"; }
note "== $(date -u '+%Y-%m-%dT%H:%M:%SZ') run-gpu.sh ${*:-(all steps)} on $(hostname)"

# --- checks ----------------------------------------------------------------------------------
if ! version=$("$java" --add-modules=jdk.incubator.vector -jar "$p/lib/radixserve.jar" --version 2>&1); then
  note "FAIL runtime: the payload's Java does not run the jar: $version"
  exit 5
fi
note "ok   runtime: $("$java" -version 2>&1 | head -1), $(echo "$version" | grep -v WARNING | head -1)"

layout=$( (python3 - "$p" <<'PY'
import ctypes, os, sys
p = sys.argv[1]
loaded = []
# Dependencies first; RTLD_GLOBAL so that cuBLAS finds cuBLASLt as the provider will. The CUDA
# provider itself links libcuda.so.1, so it is loaded only by ONNX Runtime, past the driver check.
# Each with the payload's libraries it needs (cuBLAS links cuBLASLt).
for lib, needs in [("cuda12/libcudart.so.12", []), ("cuda12/libcublasLt.so.12", []),
                   ("cuda12/libcublas.so.12", ["cuda12/libcublasLt.so.12"]),
                   ("cuda12/libcurand.so.10", []), ("ort/libonnxruntime.so", []),
                   ("ort/libonnxruntime_providers_shared.so", [])]:
    path = os.path.join(p, lib)
    if not all(os.path.exists(os.path.join(p, x)) for x in [lib] + needs):
        continue  # it or what it needs has not arrived yet: the pieces check names it
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        sys.exit(f"{lib} does not load: {e}")
    loaded.append(os.path.basename(lib))
print(" ".join(loaded))
PY
) 2>&1) || { note "FAIL layout: $layout"; exit 5; }
note "ok   layout: loads ${layout:-nothing yet}"

# A payload packed for the device tool (tree.json) leaves the test resources to the working tree
# that every call of the tool brings: its folders go on the tests' classpath, after the payload's.
if [ -f "$p/tree.json" ]; then
  tree=$( (python3 - "$p/tree.json" "$called_from" <<'PY'
import hashlib, json, os, sys
want = json.load(open(sys.argv[1]))
given = os.environ.get("RADIXSERVE_TREE")
candidates, d = ([given] if given else []), os.path.abspath(sys.argv[2])
while not given:
    candidates.append(d)
    if os.path.dirname(d) == d:
        break
    d = os.path.dirname(d)
root = next((c for c in candidates if all(os.path.isdir(os.path.join(c, x)) for x in want["dirs"])), None)
if root is None:
    sys.exit("this payload was packed with --device-tool and leaves the test resources ("
             + ", ".join(want["dirs"]) + ") to the repository's working tree, which is not in "
             + (f"RADIXSERVE_TREE={given}" if given else f"{sys.argv[2]} or a folder above it")
             + ": run from the repository root, or set RADIXSERVE_TREE")
missing = [f for f in want["files"] if not os.path.isfile(os.path.join(root, f))]
if missing:
    sys.exit(f"the working tree {root} lacks {len(missing)} of the {len(want['files'])} test resources"
             f" the pack left to it, e.g. {missing[0]}: pack again from this tree")
changed = sum(hashlib.sha256(open(os.path.join(root, f), "rb").read()).hexdigest() != h
              for f, h in want["files"].items())
print(root)
print(f"{len(want['files'])} test resources from {root}"
      + (f" ({changed} changed since the pack: the tests are the packed ones)" if changed else ""))
PY
) 2>&1) || { note "FAIL tree: $tree"; exit 5; }
  for d in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["dirs"]))' "$p/tree.json"); do
    cp="$cp:$(head -1 <<< "$tree")/$d"
  done
  note "ok   tree: $(tail -1 <<< "$tree")"
fi
# for running a single test by hand: java -cp "$(cat work/test-classpath)" ...
echo "$cp" > "$p/work/test-classpath"

if ! driver=$(python3 -c '
import ctypes, sys
try:
    ctypes.CDLL("libcuda.so.1")
except OSError as e:
    sys.exit(str(e))' 2>&1); then
  note "STOP no NVIDIA driver: libcuda.so.1 not found ($driver)"
  rehearsal=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("rehearsal"))' "$p/payload.json" 2>/dev/null)
  if [ "$rehearsal" = False ] && [ ! -s "$p/.missing" ]; then
    # the whole payload is here: the server's own preflight must reach the same point
    "$java" --add-modules=jdk.incubator.vector -jar "$p/lib/radixserve.jar" serve --device cuda \
      --host 127.0.0.1 --port 0 > "$p/work/preflight.log" 2>&1 &
    pid=$!
    for _ in $(seq 240); do kill -0 $pid 2>/dev/null || break; sleep 0.5; done
    kill $pid 2>/dev/null
    wait $pid 2>/dev/null
    if grep -q 'NVIDIA driver library libcuda.so.1 is not found' "$p/work/preflight.log"; then
      note "ok   serve --device cuda stops at the driver too: ONNX Runtime's CUDA build, its provider and the CUDA 12 libraries were all found"
    else
      note "FAIL serve --device cuda stopped before the driver check: $(grep -m1 -E 'Exception|Error' "$p/work/preflight.log")"
      exit 5
    fi
  fi
  exit 3
fi
note "ok   driver: libcuda.so.1 loads"
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 \
  | sed 's/^/     nvidia-smi: /' | tee -a "$summary"

if [ -s "$p/.missing" ]; then
  note "WAIT pieces: not yet arrived: $(paste -sd';' "$p/.missing")"
  exit 4
fi
note "ok   pieces: all unpacked"
[ "${only[*]}" = check ] && exit 0

# --- steps -----------------------------------------------------------------------------------
# step NAME REPORT COMMAND...: runs COMMAND, its output appended to $out/REPORT under a header.
step() {
  local name=$1 report=$2
  shift 2
  [[ " ${only[*]} " == *" $name "* ]] || return 0
  local t0=$SECONDS
  echo "===== $name $(date -u '+%Y-%m-%dT%H:%M:%SZ')" >> "$out/$report"
  if "$@" >> "$out/$report" 2>&1; then
    note "PASS $name ($((SECONDS - t0)) s)"
  else
    note "FAIL $name ($((SECONDS - t0)) s), last lines of $out/$report:"
    tail -40 "$out/$report"
    status=1
  fi
}

junit() {  # JUnit XML stays in the payload: only the console tree is reported
  local reports=$1
  shift
  "$java" "${jvm[@]}" -cp "$cp" org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --details=tree --reports-dir="$p/work/junit-$reports" "$@"
}

# Appends the decode table the last CudaRunnerTest run wrote (work/target/gpu) to the reports.
keep_table() {
  local table="$p/work/target/gpu/decode-table.md"
  if [ -f "$table" ]; then
    { echo "## $1 ($(date -u '+%Y-%m-%dT%H:%M:%SZ'))"; echo; cat "$table"; echo; } >> "$out/decode-tables.md"
    cat "$table"
    rm -f "$table"
  fi
}

# Starts `serve --device cuda ARGS...` logging to $1; sets server_pid and server_port (empty when
# the server did not come up).
start_server() {
  local log=$1
  shift
  "$java" --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector \
    -jar "$p/lib/radixserve.jar" serve --device cuda --host 127.0.0.1 --port 0 "$@" >"$log" 2>&1 &
  server_pid=$!
  server_port=""
  for _ in $(seq 1 240); do
    server_port=$(sed -n 's#.*serving .* on http://127.0.0.1:\([0-9]*\).*#\1#p' "$log" | head -1)
    [ -n "$server_port" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.5
  done
  if [ -z "$server_port" ]; then
    cat "$log"
    kill "$server_pid" 2>/dev/null
  fi
}

# One greedy completion from `serve --device cuda ARGS...`, then the server's log.
serve_completion() {
  local log="$p/work/server.log"
  start_server "$log" "$@"
  [ -n "$server_port" ] || return 1
  local pid=$server_pid port=$server_port
  python3 - "$port" <<'PY'
import json, sys, urllib.request
body = json.dumps({"model": "radixserve-embedded-gpt2", "prompt": "Once upon a time",
                   "max_tokens": 16, "temperature": 0}).encode()
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/v1/completions", data=body,
                             headers={"Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=60) as r:
    answer = json.load(r)
print(json.dumps(answer, indent=1))
assert answer["usage"]["completion_tokens"] == 16, answer
PY
  local rc=$?
  kill "$pid"
  wait "$pid" 2>/dev/null
  echo "--- server log"
  cat "$log"
  return $rc
}

# The shared-system-prompt workload against two CUDA servers, prefix cache on and off.
bench_cache() {
  start_server "$p/work/bench-on.log"
  [ -n "$server_port" ] || return 1
  local on_pid=$server_pid on=$server_port
  start_server "$p/work/bench-off.log" --prefix-caching false
  if [ -z "$server_port" ]; then
    kill "$on_pid"
    return 1
  fi
  local off_pid=$server_pid off=$server_port
  "$java" -jar "$p/lib/radixserve.jar" bench --url "http://127.0.0.1:$on" \
    --compare-url "http://127.0.0.1:$off" --workload shared-system-prompt --quiet \
    --output "$out/bench-cache.json"
  local rc=$?
  kill "$on_pid" "$off_pid"
  wait "$on_pid" "$off_pid" 2>/dev/null
  echo "--- server log, cache on"; cat "$p/work/bench-on.log"
  echo "--- server log, cache off"; cat "$p/work/bench-off.log"
  return $rc
}

# The gpu-tagged tests again with ONNX Runtime's opt-in CUTLASS kernels for MatMulNBits
# (fpA_intB: fused dequantize-and-multiply; ORT_FPA_INTB_GEMM is read when a kernel is built, so
# it must be in the JVM's environment). 1.29.0 ships them but leaves them off; this run measures
# whether radixserve should turn them on, and checks that its int8/int4 graphs stay correct there.
fpa_intb() {
  (export ORT_FPA_INTB_GEMM=1 && junit "$@")
}

step gpu-tests gpu-tests.log junit gpu-tests --select-package=dev.radixserve.model --include-tag=gpu
keep_table "decode table"
step gpu-tests-fpa-intb gpu-tests.log fpa_intb gpu-tests-fpa-intb \
  --select-class=dev.radixserve.model.CudaRunnerTest
keep_table "decode table, ORT_FPA_INTB_GEMM=1"
step model-runtime-suite model-runtime-suite.log junit model-runtime \
  --select-package=dev.radixserve.model --exclude-tag=gpu
step e2e e2e.log junit e2e --select-class=dev.radixserve.server.DeviceParityEndToEndTest \
  --select-class=dev.radixserve.server.CacheEquivalenceTest \
  --select-class=dev.radixserve.server.ServerEndToEndTest \
  --select-class=dev.radixserve.server.QuantizedServingTest
step serve serve.log serve_completion
# the quantized modes as the server runs them on CUDA (MatMulNBits, no accuracy level)
step serve-int8 serve.log serve_completion --quantization int8
step serve-int4 serve.log serve_completion --quantization int4
step bench-cache bench-cache.log bench_cache
echo "reports in $out"
exit $status
