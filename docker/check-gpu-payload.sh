#!/usr/bin/env bash
# CI rehearsal of the GPU run on a machine without a GPU (docker/check-image.sh calls it with its
# private daemon in DOCKER_HOST; it needs the jar and test classes of a build in */target).
#
# Packs with `docker/gpu-payload.sh pack --rehearsal`: the real Java runtime (jlink), jar, test
# classes, JUnit launcher and piece format (pieces of 80 MiB, xz -0: the real ones are checked by
# the real pack's limit), but stand-ins for the CUDA libraries and the CPU
# build's ONNX Runtime (no CUDA download or cut: that is what keeps it to seconds),
# then, in a container with python3 and nothing else (no Java, no CUDA, no driver), as a GPU host
# would see it:
#   1. piece 1 alone: it unpacks, names the pieces still missing, the payload's Java runs the jar,
#      the libraries that arrived load, and run stops at the driver check with
#      "no NVIDIA driver: libcuda.so.1 not found" (exit 3);
#   2. the other pieces arrive: only they are unpacked (a file split across pieces is joined; the
#      stand-ins' LZ4 fatbin entries, which travel uncompressed, are compressed again with the
#      payload's liblz4 and the library's SHA-256 checked), all libraries load, and it stops at the
#      same place;
#   3. the reports directory holds at most 8 files and no folders.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DOCKER_HOST:?run by docker/check-image.sh (its private daemon)}"
START=$SECONDS
IMAGE=radixserve-ci/python3-host
say() { echo "check-gpu-payload: [$((SECONDS - START))s] $*"; }
fail() { echo "check-gpu-payload: FAIL: $*" >&2; exit 1; }

# A host as the issue describes it, less the GPU: python3 with its standard library (Debian's
# python3-minimal lacks json and lzma) and a shell, nothing more.
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  say "making $IMAGE (debian:bookworm-slim + python3)"
  printf '%s\n' 'FROM debian:bookworm-slim' \
    'RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3 && rm -rf /var/lib/apt/lists/*' \
    | docker build -q --network host -t "$IMAGE" - >/dev/null || fail "building $IMAGE"
fi

[ -f server/target/radixserve.jar ] && [ -d server/target/test-classes ] \
  || ./mvnw -B -ntp -q -DskipTests package
probe_fixture=$(ls model-runtime/src/test/resources/chat-templates | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Its own folder: a real pack in gpu-payload/ stays as it is. xz -0 and pieces of 80 MiB, not 60:
# fast, and the piece logic is the same (piece 1 holds the runtime, a library crosses into piece 2).
GPU_PAYLOAD_DIR="$work/pack" GPU_PAYLOAD_XZ=-0 GPU_PAYLOAD_PIECE_BYTES=$((80 * 1024 * 1024)) bash docker/gpu-payload.sh pack --rehearsal 2> "$work/pack.log" \
  || { tail -20 "$work/pack.log" >&2; fail "pack --rehearsal"; }
grep -A9 'pieces,' "$work/pack.log" | sed 's/^/    /'
pieces=("$work"/pack/radixserve-gpu-*-of-*.tar)
[ ${#pieces[@]} -ge 2 ] || fail "the rehearsal packed ${#pieces[@]} piece(s); it must cross pieces"
say "packed ${#pieces[@]} pieces"

host=$work/host
mkdir -p "$host/payload"
cp "${pieces[0]}" "$host/payload/"
run() {  # runs gpu-payload.sh run in the python3-only container; output to $host/run.log
  docker run --rm --network none -v "$host/payload:/payload" \
    -v "$PWD/docker/gpu-payload.sh:/opt/gpu-payload.sh:ro" "$IMAGE" \
    bash -c 'for t in java javac nvidia-smi; do command -v $t && exit 90; done
             ldconfig -p | grep -q libcuda && exit 91
             bash /opt/gpu-payload.sh run /payload' > "$host/run.log" 2>&1
}
expect_driver_stop() {
  local rc=0
  run || rc=$?
  [ $rc = 3 ] && grep -q '^STOP no NVIDIA driver: libcuda.so.1 not found' "$host/run.log" \
    || fail "$1: exit $rc, not the driver stop: $(cat "$host/run.log")"
  grep -q '^ok   runtime: ' "$host/run.log" || fail "$1: runtime check: $(cat "$host/run.log")"
}

expect_driver_stop "piece 1 alone"
grep -q 'waiting for: .*libcublasLt.so.12' "$host/run.log" || fail "piece 1 alone: missing pieces not named: $(cat "$host/run.log")"
say "piece 1 alone: $(grep -m1 'have piece' "$host/run.log" | sed 's/gpu-payload: //')"
say "  $(grep '^ok   layout' "$host/run.log")"
cp "$host/run.log" "$host/run-piece-1.log"

cp "${pieces[@]:1}" "$host/payload/"
expect_driver_stop "all pieces"
grep -q 'all unpacked' "$host/run.log" || fail "all pieces: not all unpacked: $(cat "$host/run.log")"
! grep -q 'unpacked app.tar.xz' "$host/run.log" || fail "all pieces: piece 1 was unpacked again"
# each stand-in's two LZ4 fatbin entries travelled uncompressed and were compressed again there
# (with piece 1 alone or with the rest)
for unit in cuda12/libcublas.so.12 cuda12/libcublasLt.so.12 ort/libonnxruntime_providers_cuda.so; do
  grep -qF "unpacked $unit.lzr.xz (2 fatbin entries compressed again, SHA-256 as packed)" \
    "$host/run-piece-1.log" "$host/run.log" || fail "$unit was not joined from its transport form: $(cat "$host/run-piece-1.log" "$host/run.log")"
done
for lib in libcudart.so.12 libcublasLt.so.12 libcublas.so.12 libcurand.so.10 libonnxruntime.so libonnxruntime_providers_shared.so; do
  grep -q "^ok   layout: .*$lib" "$host/run.log" || fail "all pieces: $lib did not load: $(cat "$host/run.log")"
done
say "all pieces: $(grep 'have piece' "$host/run.log" | sed 's/gpu-payload: //'); every library loads"
say "  $(grep '^STOP' "$host/run.log")"

files=$(find "$host/payload/reports" -type f | wc -l)
dirs=$(find "$host/payload/reports" -mindepth 1 -type d | wc -l)
[ "$files" -le 8 ] && [ "$dirs" = 0 ] || fail "reports: $files files, $dirs folders"
say "reports: $files file(s), no folders"
[ -f "$host/payload/unpacked/tests/model-runtime/chat-templates/$probe_fixture" ] && [ ! -e "$host/payload/unpacked/tree.json" ] \
  || fail "the plain pack does not carry the test resources itself"

# --- the device tool's layout: the test resources come with the working tree ---------------
GPU_PAYLOAD_DIR="$work/pack-dt" GPU_PAYLOAD_XZ=-0 bash docker/gpu-payload.sh pack --rehearsal --device-tool 2> "$work/pack-dt.log" \
  || { tail -20 "$work/pack-dt.log" >&2; fail "pack --rehearsal --device-tool"; }
say "device tool: $(grep -m1 'test resources' "$work/pack-dt.log" | sed 's/gpu-payload: device tool: //')"
# the device tool runs the command in the root of a copy of the working tree, the pieces beside it
tree=$work/tree
mkdir -p "$tree/gpu-payload" "$tree/docker"
cp "$work"/pack-dt/radixserve-gpu-*-of-*.tar "$tree/gpu-payload/"
cp docker/gpu-payload.sh "$tree/docker/"
for d in model-runtime/src/test/resources server/src/test/resources; do
  mkdir -p "$tree/$d"
  git ls-files -z --cached --others --exclude-standard -- "$d" | tar -cf - --null -T - | tar -C "$tree" -xf -
done
# `check`, then two test classes whose fixtures are in the tree's model-runtime and server
# resources, on the classpath run-gpu.sh wrote; the payload's tests hold no fixture
rc=0
docker run --rm --network none -v "$tree:/repo" -w /repo "$IMAGE" bash -c '
  bash docker/gpu-payload.sh run gpu-payload check; rc=$?
  [ $rc = 3 ] || exit $rc
  u=gpu-payload/unpacked
  ls $u/tests/model-runtime/chat-templates 2>/dev/null && exit 92
  $u/java/bin/java --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector \
    -cp "$(cat $u/work/test-classpath)" org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --details=summary --select-class=dev.radixserve.model.chat.JinjaChatTemplateTest \
    --select-class=dev.radixserve.server.http.ReasoningParserTest' > "$host/run-dt.log" 2>&1 || rc=$?
[ $rc = 0 ] && grep -q '^ok   tree: [0-9]* test resources from /repo$' "$host/run-dt.log" \
  && grep -q '^STOP no NVIDIA driver' "$host/run-dt.log" \
  && grep -Eq '\[ *[1-9][0-9]* tests successful' "$host/run-dt.log" && grep -Eq '\[ *0 tests failed' "$host/run-dt.log" \
  || fail "device tool: exit $rc: $(cat "$host/run-dt.log")"
say "device tool: $(grep '^ok   tree' "$host/run-dt.log" | sed 's/ok   tree: //'); from them $(grep -Eo '[0-9]+ tests successful' "$host/run-dt.log")"
# without the tree, the check names what is missing and stops
rm -rf "$tree/model-runtime"
rc=0
docker run --rm --network none -v "$tree:/repo" -w /repo "$IMAGE" \
  bash docker/gpu-payload.sh run gpu-payload check > "$host/run-dt.log" 2>&1 || rc=$?
[ $rc = 5 ] && grep -q '^FAIL tree: this payload was packed with --device-tool' "$host/run-dt.log" \
  || fail "device tool without the tree: exit $rc: $(cat "$host/run-dt.log")"
say "device tool without the tree: exit 5, $(grep '^FAIL tree' "$host/run-dt.log" | cut -c1-100)…"
say "OK in $((SECONDS - START)) s"
