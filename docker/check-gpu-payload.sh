#!/usr/bin/env bash
# CI rehearsal of the GPU run on a machine without a GPU (docker/check-image.sh calls it with its
# private daemon in DOCKER_HOST; it needs the jar and test classes of a build in */target).
#
# Packs with `docker/gpu-payload.sh pack --rehearsal --device-tool`: the real Java runtime (jlink),
# jar, test classes, JUnit launcher and piece format (pieces of 80 MiB, xz -0: the real ones are
# checked by the real pack's limit), but stand-ins for the CUDA libraries and the CPU
# build's ONNX Runtime (no CUDA download or cut: that is what keeps it to seconds), and, as the
# device tool's packs do, without the test resources, which come with the working tree. Then, in a
# container with python3 and nothing else (no Java, no CUDA, no driver), laid out as the device
# tool lays out a call (the working tree's test resources and docker/gpu-payload.sh, the pieces in
# gpu-payload/, the command run in the tree's root):
#   1. piece 1 alone: it unpacks, names the pieces still missing, the payload's Java runs the jar,
#      the libraries that arrived load, the tree's test resources are found, and run stops at the
#      driver check with "no NVIDIA driver: libcuda.so.1 not found" (exit 3);
#   2. the other pieces arrive: only they are unpacked (a file split across pieces is joined; the
#      stand-ins' LZ4 fatbin entries, which travel uncompressed, are compressed again with the
#      payload's liblz4 and the library's SHA-256 checked), all libraries load, and it stops at the
#      same place;
#   3. the reports directory holds at most 8 files and no folders;
#   4. the payload holds no fixture, and two test classes whose fixtures are in the tree's
#      model-runtime and server resources pass on the classpath run-gpu.sh wrote;
#   5. without the tree, the check fails and says so (exit 5).
# The plain pack (no --device-tool) differs only in keeping the resources in its test classes.
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
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Its own folder: a real pack in gpu-payload/ stays as it is. xz -0 and pieces of 80 MiB, not what
# the tree leaves: fast, and the piece logic is the same (piece 1 holds the runtime, a library
# crosses into piece 2).
GPU_PAYLOAD_DIR="$work/pack" GPU_PAYLOAD_XZ=-0 GPU_PAYLOAD_PIECE_BYTES=$((80 * 1024 * 1024)) \
  bash docker/gpu-payload.sh pack --rehearsal --device-tool 2> "$work/pack.log" \
  || { tail -20 "$work/pack.log" >&2; fail "pack --rehearsal --device-tool"; }
grep -A9 'pieces,' "$work/pack.log" | sed 's/^/    /'
pieces=("$work"/pack/radixserve-gpu-*-of-*.tar)
[ ${#pieces[@]} -ge 2 ] || fail "the rehearsal packed ${#pieces[@]} piece(s); it must cross pieces"
say "packed ${#pieces[@]} pieces; $(grep -m1 'test resources' "$work/pack.log" | sed 's/gpu-payload: device tool: //')"

# what a device-tool call finds: the working tree (here only what run uses of it), the pieces in
# gpu-payload/ beside it
host=$work/tree
mkdir -p "$host/gpu-payload" "$host/docker"
cp docker/gpu-payload.sh "$host/docker/"
git ls-files -z --cached --others --exclude-standard -- model-runtime/src/test/resources server/src/test/resources \
  | tar -cf - --null -T - | tar -C "$host" -xf -
cp "${pieces[0]}" "$host/gpu-payload/"
run() {  # runs gpu-payload.sh run in the python3-only container, then $1 there; output to $host/run.log
  docker run --rm --network none -v "$host:/repo" -w /repo "$IMAGE" \
    bash -c 'for t in java javac nvidia-smi; do command -v $t && exit 90; done
             ldconfig -p | grep -q libcuda && exit 91
             bash docker/gpu-payload.sh run gpu-payload; rc=$?
             [ $rc = 3 ] || exit $rc
             '"${1:-}"'
             exit 3' > "$host/run.log" 2>&1
}
expect_driver_stop() {
  local rc=0
  run "${2:-}" || rc=$?
  [ $rc = 3 ] && grep -q '^STOP no NVIDIA driver: libcuda.so.1 not found' "$host/run.log" \
    || fail "$1: exit $rc, not the driver stop: $(cat "$host/run.log")"
  grep -q '^ok   runtime: ' "$host/run.log" || fail "$1: runtime check: $(cat "$host/run.log")"
  grep -q '^ok   tree: [0-9]* test resources from /repo$' "$host/run.log" || fail "$1: tree check: $(cat "$host/run.log")"
}

expect_driver_stop "piece 1 alone"
grep -q 'waiting for: .*libcublasLt.so.12' "$host/run.log" || fail "piece 1 alone: missing pieces not named: $(cat "$host/run.log")"
say "piece 1 alone: $(grep -m1 'have piece' "$host/run.log" | sed 's/gpu-payload: //')"
say "  $(grep '^ok   layout' "$host/run.log")"
cp "$host/run.log" "$host/run-piece-1.log"

cp "${pieces[@]:1}" "$host/gpu-payload/"
# and with all of them, two test classes whose fixtures are in the tree's model-runtime and server
# resources, on the classpath run-gpu.sh wrote; the payload's test classes hold no fixture
expect_driver_stop "all pieces" '
  u=gpu-payload/unpacked
  [ -f $u/tree.json ] && [ -d $u/tests/model-runtime/dev ] || exit 92
  ls $u/tests/model-runtime/chat-templates 2>/dev/null && exit 93
  $u/java/bin/java --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector \
    -cp "$(cat $u/work/test-classpath)" org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --details=summary --select-class=dev.radixserve.model.chat.JinjaChatTemplateTest \
    --select-class=dev.radixserve.server.http.ReasoningParserTest || exit 94'
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

files=$(find "$host/gpu-payload/reports" -type f | wc -l)
dirs=$(find "$host/gpu-payload/reports" -mindepth 1 -type d | wc -l)
[ "$files" -le 8 ] && [ "$dirs" = 0 ] || fail "reports: $files files, $dirs folders"
say "reports: $files file(s), no folders"
grep -Eq '\[ *[1-9][0-9]* tests successful' "$host/run.log" && grep -Eq '\[ *0 tests failed' "$host/run.log" \
  || fail "the tests on the tree's resources: $(cat "$host/run.log")"
say "$(grep '^ok   tree' "$host/run.log" | sed 's/ok   tree: //'); on them $(grep -Eo '[0-9]+ tests successful' "$host/run.log")"
# without the tree, the check says what is missing and stops
rm -rf "$host/model-runtime"
rc=0
run || rc=$?
[ $rc = 5 ] && grep -q '^FAIL tree: this payload was packed with --device-tool' "$host/run.log" \
  || fail "without the tree: exit $rc: $(cat "$host/run.log")"
say "without the tree: exit 5, $(grep '^FAIL tree' "$host/run.log" | cut -c1-90)…"
say "OK in $((SECONDS - START)) s"
