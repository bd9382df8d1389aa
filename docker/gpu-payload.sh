#!/usr/bin/env bash
# The GPU test run, in two steps so the slow packing never happens on the GPU host:
#
#   docker/gpu-payload.sh pack [STAGE_DIR]   on a build machine: builds the -Pcuda jar, the test
#       classes and the JUnit console launcher, fetches the CUDA 12 libraries, and writes
#       gpu-payload/payload.tar.xz.part-* (pieces of at most 60 MiB; gpu-payload/ is ignored by
#       git). With STAGE_DIR it packs that folder as it is instead (how the script itself is
#       tested, on a small dummy payload).
#   docker/gpu-payload.sh run [PAYLOAD_DIR [STEP...]]  on the GPU host, one command: joins and
#       unpacks the pieces with python3's tarfile (no xz binary needed; skipped when the same
#       pieces are already unpacked there) and runs the payload's run-gpu.sh, which writes its
#       reports under PAYLOAD_DIR/out (or $OUT when set). STEPs run only those steps (run-gpu.sh
#       names them), for a host that limits each command's time.
#
# What run-gpu.sh runs (see docker/run-gpu.sh), within 10 minutes on one GPU:
#   1 the gpu-tagged tests (CudaRunnerTest: fp16/bf16 parity, int8/int4 MatMulNBits parity, bus
#     traffic, decode table per weight mode), then CudaRunnerTest again with ORT_FPA_INTB_GEMM=1
#   2 the model-runtime suite with -Dradixserve.test.device=cuda
#   3 the HTTP end-to-end suites against --device cuda, quantized serving included
#   4 serve --device cuda answering one completion, unquantized, --quantization int8 and int4
#   5 bench shared-system-prompt against two CUDA servers, prefix cache on and off
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:?usage: gpu-payload.sh pack [STAGE_DIR] | run [PAYLOAD_DIR [STEP...]]}
piece=${GPU_PAYLOAD_PIECE_BYTES:-$((60 * 1024 * 1024))}

stage_build() {
  local stage=$1
  cd "$root"
  source .ci/java-home.sh
  ./mvnw -B -ntp -Pcuda -DskipTests package
  mkdir -p "$stage/lib" "$stage/tests/model-runtime" "$stage/tests/server" "$stage/cuda12"
  cp server/target/radixserve.jar "$stage/lib/radixserve.jar"
  cp -r model-runtime/target/test-classes/. "$stage/tests/model-runtime/"
  cp -r server/target/test-classes/. "$stage/tests/server/"
  ./mvnw -B -ntp -q dependency:copy \
    -Dartifact=org.junit.platform:junit-platform-console-standalone:1.13.4 \
    -DoutputDirectory="$stage/lib"
  docker/fetch-cuda12-libs.sh "$stage/cuda12"
  cp docker/run-gpu.sh "$stage/run-gpu.sh"
  cp config/radixserve.yaml "$stage/radixserve.yaml"
}

case "$cmd" in
  pack)
    out="$root/gpu-payload"
    stage=${2:-}
    if [ -z "$stage" ]; then
      stage="$out/stage"
      rm -rf "$stage"
      stage_build "$stage"
    fi
    [ -x "$stage/run-gpu.sh" ] || { echo "gpu-payload: $stage has no run-gpu.sh" >&2; exit 1; }
    rm -f "$out"/payload.tar.xz.part-*
    mkdir -p "$out"
    tar -C "$stage" -cf - . | xz -T0 -6 | split -b "$piece" -d -a 3 - "$out/payload.tar.xz.part-"
    ls -l "$out"/payload.tar.xz.part-* >&2
    ;;
  run)
    dir=${2:-$root/gpu-payload}
    work="$dir/unpacked"
    # the pieces' names and sizes: the same set unpacked before is not unpacked again
    pieces=$(cd "$dir" && ls -l payload.tar.xz.part-* 2>/dev/null | awk '{print $5, $NF}' || true)
    if [ -z "$pieces" ] || [ "$pieces" != "$(cat "$work/.pieces" 2>/dev/null)" ]; then
      rm -rf "$work"
      mkdir -p "$work"
      python3 - "$dir" "$work" <<'PY'
import glob, io, lzma, sys, tarfile
parts = sorted(glob.glob(sys.argv[1] + "/payload.tar.xz.part-*"))
if not parts:
    sys.exit("gpu-payload: no payload.tar.xz.part-* in " + sys.argv[1])

class Joined(io.RawIOBase):
    """The pieces read back to back, without joining them on disk."""
    def __init__(self, paths):
        self.files = [open(p, "rb") for p in paths]
    def readable(self):
        return True
    def readinto(self, buffer):
        while self.files:
            n = self.files[0].readinto(buffer)
            if n:
                return n
            self.files.pop(0).close()
        return 0

with lzma.open(io.BufferedReader(Joined(parts))) as xz, tarfile.open(fileobj=xz, mode="r|") as tar:
    if hasattr(tarfile, "tar_filter"):  # Python >= 3.12 and backports: refuse odd members
        tar.extractall(sys.argv[2], filter="tar")
    else:
        tar.extractall(sys.argv[2])
print(f"gpu-payload: unpacked {len(parts)} pieces into {sys.argv[2]}", file=sys.stderr)
PY
      echo "$pieces" >"$work/.pieces"
    else
      echo "gpu-payload: $work already holds these pieces" >&2
    fi
    export OUT=${OUT:-$dir/out}
    mkdir -p "$OUT"
    exec bash "$work/run-gpu.sh" "$work" "${@:3}"
    ;;
  *)
    echo "usage: gpu-payload.sh pack [STAGE_DIR] | run [PAYLOAD_DIR [STEP...]]" >&2
    exit 2
    ;;
esac
