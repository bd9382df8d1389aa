#!/usr/bin/env bash
# Runs inside an unpacked GPU payload (docker/gpu-payload.sh run calls it): every check of the
# CUDA path, one after another, each logged to $OUT/<step>.log with a PASS/FAIL line here.
# Needs a JDK 25 (JAVA_HOME or java on PATH), python3 and an NVIDIA driver; the CUDA 12 user-space
# libraries come with the payload (cuda12/). Exit status 0 only if every step run passed.
#
#   run-gpu.sh PAYLOAD_DIR [STEP...]   with STEPs, only those (names as in the PASS/FAIL lines:
#                                      gpu-tests, gpu-tests-fpa-intb, model-runtime-suite, e2e,
#                                      serve, serve-int8, serve-int4, bench-cache), so that a host
#                                      that limits each command's time can take the run in parts
set -uo pipefail
p=$(cd "${1:?usage: run-gpu.sh PAYLOAD_DIR [STEP...]}" && pwd)
shift
only=("$@")
for name in "${only[@]}"; do
  case "$name" in
    gpu-tests | gpu-tests-fpa-intb | model-runtime-suite | e2e | serve | serve-int8 | serve-int4 \
      | bench-cache) ;;
    *) echo "run-gpu.sh: no step '$name'" >&2; exit 2 ;;
  esac
done
out=${OUT:-$p/out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$p/cuda12${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
cp="$(ls "$p"/lib/junit-platform-console-standalone-*.jar):$p/lib/radixserve.jar:$p/tests/model-runtime:$p/tests/server"
jvm=(--enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector -Xmx8g
     -Dradixserve.test.device=cuda)
status=0
cd "$p"

step() {
  local name=$1
  shift
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then
    return 0
  fi
  local t0=$SECONDS
  echo "== $name"
  if "$@" >"$out/$name.log" 2>&1; then
    echo "PASS $name ($((SECONDS - t0)) s)"
  else
    echo "FAIL $name ($((SECONDS - t0)) s), last lines of $out/$name.log:"
    tail -40 "$out/$name.log"
    status=1
  fi
}

junit() {
  local reports=$1
  shift
  "$java" "${jvm[@]}" -cp "$cp" org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --details=tree --reports-dir="$out/$reports" "$@"
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

# One greedy completion from `serve --device cuda ARGS...`; the server's log to $out/$1.log.
serve_completion() {
  local log="$out/$1.log"
  shift
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
  cat "$log"
  return $rc
}

# The shared-system-prompt workload against two CUDA servers, prefix cache on and off.
bench_cache() {
  start_server "$out/bench-cache-on.log"
  [ -n "$server_port" ] || return 1
  local on_pid=$server_pid on=$server_port
  start_server "$out/bench-cache-off.log" --prefix-caching false
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
  return $rc
}

nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || echo "warning: nvidia-smi failed (see $out/nvidia-smi.txt)"
"$java" -version >"$out/java-version.txt" 2>&1
# Moves the decode table the last CudaRunnerTest run wrote to $out/$1 and prints it.
keep_table() {
  if [ -f "$p/target/gpu/decode-table.md" ]; then
    mv "$p/target/gpu/decode-table.md" "$out/$1"
    cat "$out/$1"
  fi
}

# The gpu-tagged tests again with ONNX Runtime's opt-in CUTLASS kernels for MatMulNBits
# (fpA_intB: fused dequantize-and-multiply; ORT_FPA_INTB_GEMM is read when a kernel is built, so
# it must be in the JVM's environment). 1.29.0 ships them but leaves them off; this run measures
# whether radixserve should turn them on, and checks that its int8/int4 graphs stay correct there.
fpa_intb() {
  (export ORT_FPA_INTB_GEMM=1 && junit "$@")
}

step gpu-tests junit gpu-tests --select-package=dev.radixserve.model --include-tag=gpu
keep_table decode-table.md
step gpu-tests-fpa-intb fpa_intb gpu-tests-fpa-intb \
  --select-class=dev.radixserve.model.CudaRunnerTest
keep_table decode-table-fpa-intb.md
step model-runtime-suite junit model-runtime --select-package=dev.radixserve.model \
  --exclude-tag=gpu
step e2e junit e2e --select-class=dev.radixserve.server.DeviceParityEndToEndTest \
  --select-class=dev.radixserve.server.CacheEquivalenceTest \
  --select-class=dev.radixserve.server.ServerEndToEndTest \
  --select-class=dev.radixserve.server.QuantizedServingTest
step serve serve_completion serve-stdout
# the quantized modes as the server runs them on CUDA (MatMulNBits, no accuracy level)
step serve-int8 serve_completion serve-int8-stdout --quantization int8
step serve-int4 serve_completion serve-int4-stdout --quantization int4
step bench-cache bench_cache
echo "reports in $out"
exit $status
