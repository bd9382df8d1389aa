#!/usr/bin/env bash
# The GPU test run as a self-contained payload: its own Java runtime, the -Pcuda jar, the test
# classes, ONNX Runtime's CUDA build and the CUDA 12 user-space libraries cut to the GPUs it
# targets, in at most four pieces of at most 60 MiB. The GPU host needs only python3, bash and the
# NVIDIA driver. docker/GPU.md is the checklist for a GPU window.
#
#   docker/gpu-payload.sh pack [--no-build] [--rehearsal] [--device-tool]   on a build machine;
#       writes gpu-payload/radixserve-gpu-K-of-N.tar and prints their count and sizes.
#       --no-build   packs the jar and test classes as they are in */target (built with -Pcuda)
#       --device-tool  pieces for this project's device tool, whose every call carries the working
#                    tree beside the piece, 64 MiB in all: each piece gets what the tree leaves of
#                    that (measured now; GPU_PAYLOAD_PIECE_BYTES, when set, instead), and the pack
#                    may take up to 8 pieces. The test resources
#                    (*/src/test/resources) are left out, since the tree brings them: run-gpu.sh puts
#                    the tree's folders on the tests' classpath (the tree is found from the current
#                    folder up, or RADIXSERVE_TREE)
#       --rehearsal  CI's stand-in: the real runtime, jar, tests and unpacking, but tiny stand-ins
#                    (same names and sonames) for the CUDA libraries and the CPU build's ONNX
#                    Runtime, so no CUDA download, cut or compression (see docker/check-gpu-payload.sh)
#   docker/gpu-payload.sh run [PAYLOAD_DIR [STEP...]]       on the GPU host: unpacks the pieces that
#       have arrived since the last call (each piece is readable alone; a file split across pieces
#       is written when its last part arrives), then runs the payload's run-gpu.sh: Java runtime,
#       library layout, NVIDIA driver, then the STEPs (all when none are named) once every piece
#       is there. Reports go to $RADIXSERVE_GPU_REPORTS (default PAYLOAD_DIR/reports): at most 8
#       files, no folders.
#
# Environment for pack: GPU_PAYLOAD_ARCHS (default 90: sm_90, H100/H200) the architectures the
# CUDA libraries keep; GPU_PAYLOAD_PIECE_BYTES (default 60 MiB), GPU_PAYLOAD_MAX_PIECES (default 4);
# GPU_PAYLOAD_DIR (default gpu-payload) where the pieces go; GPU_PAYLOAD_XZ (default "--x86 --lzma2=preset=9") xz's options;
# GPU_PAYLOAD_CACHE (default gpu-payload/cache) keeps cut and compressed libraries by the hash of
# what they were made from, so a second pack spends no time on them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-}
piece=${GPU_PAYLOAD_PIECE_BYTES:-$((60 * 1024 * 1024))}
max_pieces=${GPU_PAYLOAD_MAX_PIECES:-4}
archs=${GPU_PAYLOAD_ARCHS:-90}
# x86 filter + preset 9: about 10% smaller than xz's default on these libraries, in the same time
read -r -a xz_opts <<< "${GPU_PAYLOAD_XZ:---x86 --lzma2=preset=9}"
usage="usage: gpu-payload.sh pack [--no-build] [--rehearsal] [--device-tool] | run [PAYLOAD_DIR [STEP...]]"

say() { echo "gpu-payload: $*" >&2; }

# The Java runtime: the modules docker/Dockerfile lists (its jdeps guard, repeated here on the
# jar), plus what the JUnit launcher and the test classes need beyond them.
make_runtime() {  # $1 stage
  local stage=$1 modules need extra
  modules=$(sed -n 's/^ARG JRE_MODULES=//p' "$root/docker/Dockerfile")
  need=$(jdeps --ignore-missing-deps -q --multi-release 25 --print-module-deps "$stage/lib/radixserve.jar")
  for m in $(tr , ' ' <<< "$need"); do
    case ",$modules," in *",$m,"*) ;; *) say "radixserve.jar needs module $m: add it to JRE_MODULES in docker/Dockerfile"; exit 1 ;; esac
  done
  extra=$(jdeps --ignore-missing-deps -q --multi-release 25 --print-module-deps \
    --class-path "$stage/lib/*" "$stage"/lib/junit-platform-console-standalone-*.jar \
    "$stage/tests/model-runtime" "$stage/tests/server" | tr , '\n' | grep -vxF -f <(tr , '\n' <<< "$modules") | paste -sd, || true)
  say "Java runtime: docker/Dockerfile's JRE_MODULES${extra:+ + $extra (tests)}"
  # --strip-debug (objcopy) and no jlink compression: xz packs the plain files far smaller
  jlink --add-modules "$modules${extra:+,$extra}" --strip-debug --no-man-pages --no-header-files \
    --compress=zip-0 --output "$stage/java"
}

# The jar without the native libraries the CUDA path does not load: every ONNX Runtime library
# (they travel cut, under ort/, and RADIXSERVE_ORT_LIBRARY points there) and the tokenizer
# and JNA libraries of other platforms. Stored, not deflated: xz compresses it better (the JUnit
# launcher too, which has none of those: 3.2 MB deflated, about half that stored and through xz).
slim_jar() {  # $1 source jar, $2 target jar
  python3 - "$1" "$2" <<'PY'
import re, sys, zipfile
drop = re.compile(r"ai/onnxruntime/native/|native/lib/(?!linux-x86_64/)"
                  r"|com/sun/jna/(?!linux-x86-64/)[^/]+/")
with zipfile.ZipFile(sys.argv[1]) as src, zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_STORED) as dst:
    for info in src.infolist():
        if not drop.match(info.filename):
            dst.writestr(info, src.read(info), compress_type=zipfile.ZIP_STORED)
PY
}

# A library cut to $archs, in its transport form (docker/fatbin-lz.py: the fatbin entries
# uncompressed, for xz to compress far better than LZ4 did) and compressed; both steps come from
# the cache when they were made before from the same bytes.
cut_and_compress() {  # $1 library, $2 unit file to write
  local cache=${GPU_PAYLOAD_CACHE:-$root/gpu-payload/cache} key lzkey
  key=$( (cat "$1" "$root/docker/fatbin-cut.py"; echo "${xz_opts[*]}") | sha256sum | cut -c1-16)
  key="$(basename "$1")-sm$archs-$key"
  mkdir -p "$cache"
  if [ ! -f "$cache/$key.xz" ]; then
    python3 "$root/docker/fatbin-cut.py" cut --keep "$archs" "$1" "$cache/$key.so"
    xz -T0 "${xz_opts[@]}" -c "$cache/$key.so" > "$cache/$key.xz.tmp"
    mv "$cache/$key.xz.tmp" "$cache/$key.xz"
    rm -f "$cache/$key.so"
  else
    say "$(basename "$1"): cut to sm_$archs and compressed before (cache $cache/$key.xz)"
  fi
  lzkey=$( (echo "$key"; cat "$root/docker/fatbin-lz.py" "$liblz4"; echo "${xz_opts[*]}") | sha256sum | cut -c1-16)
  lzkey="$(basename "$1")-sm$archs-lzr-$lzkey"
  if [ ! -f "$cache/$lzkey.xz" ]; then
    xz -dc "$cache/$key.xz" > "$cache/$lzkey.so"
    to_transport "$cache/$lzkey.so" "$cache/$lzkey.xz"
    rm -f "$cache/$lzkey.so"
  else
    say "$(basename "$1"): transport form made before (cache $cache/$lzkey.xz)"
  fi
  cp "$cache/$lzkey.xz" "$2"
}

# A library's transport form (docker/fatbin-lz.py split, checked there byte for byte with the
# liblz4 the payload carries), compressed.
to_transport() {  # $1 library, $2 file to write
  python3 "$root/docker/fatbin-lz.py" split "$liblz4" "$1" "$2.lzr"
  xz -T0 "${xz_opts[@]}" -c "$2.lzr" > "$2.tmp"
  mv "$2.tmp" "$2"
  rm -f "$2.lzr"
}

# An empty shared object with the given soname. libonnxruntime_providers_cuda.so lists
# libcurand.so.10 as NEEDED but imports no symbol from it (checked here), so the real one (167 MB,
# 37 MiB compressed) is dead weight.
stub_library() {  # $1 soname, $2 path
  local c
  c=$(mktemp --suffix=.c)
  echo "/* stand-in for $1: nothing is imported from it */" > "$c"
  cc -shared -fPIC -Wl,-soname,"$1" -o "$2" "$c"
  rm -f "$c"
}

# The room a device-tool call leaves for a piece: 64 MiB less what travels with every call (the
# tracked files and the untracked ones git does not ignore) less 1 MiB for the tar headers and
# the tool's own rounding. The tree grows with the project, so this is measured at each pack.
device_tool_piece_bytes() {
  local tree
  tree=$(cd "$root" && git ls-files -z --cached --others --exclude-standard \
    | xargs -0 -r stat -c %s -- 2>/dev/null | awk '{s += $1} END {print s + 0}')
  local room=$((64 * 1024 * 1024 - tree - 1024 * 1024))
  say "device tool: the working tree is $((tree / 1024 / 1024)) MiB, so each piece gets $((room / 1024 / 1024)) MiB"
  [ "$room" -ge $((8 * 1024 * 1024)) ] || { say "the working tree leaves under 8 MiB per call"; exit 1; }
  echo "$room"
}

# The test resources every device-tool call brings in the working tree: taken out of the payload's
# test classes (after checking they are the tree's, byte for byte) and listed in tree.json, with
# their SHA-256, for run-gpu.sh to put the tree's folders on the tests' classpath.
tree_resources=(model-runtime/src/test/resources server/src/test/resources)
leave_resources_to_tree() {  # $1 stage
  python3 - "$1" "${tree_resources[@]}" <<'PY'
import hashlib, json, os, subprocess, sys
stage, dirs = sys.argv[1], sys.argv[2:]
files, size = {}, 0
for d in dirs:
    module = d.split("/")[0]
    # what the device tool sends: tracked files and the untracked ones git does not ignore
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", d],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for path in filter(None, listed):
        if not os.path.isfile(path):
            continue  # deleted but still in the index: not in the tree the tool sends
        rel = os.path.relpath(path, d)
        packed = os.path.join(stage, "tests", module, rel)
        data = open(path, "rb").read()
        if not os.path.isfile(packed) or open(packed, "rb").read() != data:
            sys.exit(f"gpu-payload: {module}/target/test-classes/{rel} is not the tree's {path}: rebuild the test classes")
        os.remove(packed)
        files[path] = hashlib.sha256(data).hexdigest()
        size += len(data)
    for top, _, _ in os.walk(os.path.join(stage, "tests", module), topdown=False):
        if not os.listdir(top):  # a folder that held only resources
            os.rmdir(top)
json.dump({"dirs": dirs, "files": files}, open(os.path.join(stage, "tree.json"), "w"), indent=0)
print(f"gpu-payload: device tool: {len(files)} test resources ({size / 2**20:.1f} MiB) left to the working tree's "
      + " and ".join(dirs), file=sys.stderr)
PY
}

pack() {
  local build=1 rehearsal=0 device_tool=0
  for a in "$@"; do
    case "$a" in
      --no-build) build=0 ;;
      --rehearsal) rehearsal=1 ;;
      --device-tool) device_tool=1 ;;
      *) echo "$usage" >&2; exit 2 ;;
    esac
  done
  cd "$root"
  source .ci/java-home.sh
  if [ $device_tool = 1 ]; then
    # an explicit GPU_PAYLOAD_PIECE_BYTES wins (the CI rehearsal's layout, with its own piece size)
    [ -n "${GPU_PAYLOAD_PIECE_BYTES:-}" ] || piece=$(device_tool_piece_bytes)
    max_pieces=${GPU_PAYLOAD_MAX_PIECES:-8}
  fi
  local out=${GPU_PAYLOAD_DIR:-$root/gpu-payload}
  local stage="$out/stage" units="$out/units"
  rm -rf "$stage" "$units" "$out"/radixserve-gpu-*.tar
  mkdir -p "$stage/lib" "$stage/tests/model-runtime" "$stage/tests/server" "$stage/ort" "$stage/cuda12" "$units/cuda12" "$units/ort"
  if [ $build = 1 ] && [ $rehearsal = 0 ]; then
    say "building the -Pcuda jar"
    ./mvnw -B -ntp -q -Pcuda -DskipTests package
  fi
  [ -f server/target/radixserve.jar ] || { say "no server/target/radixserve.jar: build it first"; exit 1; }
  local jar=server/target/radixserve.jar
  slim_jar "$jar" "$stage/lib/radixserve.jar"
  cp -r model-runtime/target/test-classes/. "$stage/tests/model-runtime/"
  cp -r server/target/test-classes/. "$stage/tests/server/"
  [ $device_tool = 0 ] || leave_resources_to_tree "$stage"
  ./mvnw -B -ntp -q dependency:copy \
    -Dartifact=org.junit.platform:junit-platform-console-standalone:1.13.4 -DoutputDirectory="$out/junit"
  local launcher
  for launcher in "$out"/junit/*.jar; do slim_jar "$launcher" "$stage/lib/$(basename "$launcher")"; done
  rm -rf "$out/junit"
  make_runtime "$stage"
  cp docker/run-gpu.sh "$stage/run-gpu.sh"
  cp config/radixserve.yaml "$stage/radixserve.yaml"
  # The host compresses the CUDA libraries' kernels again with this liblz4 (docker/fatbin-lz.py)
  liblz4=$(PATH=$PATH:/sbin:/usr/sbin ldconfig -p | awk '$1 == "liblz4.so.1" && /x86-64/ && !found {print $NF; found = 1}')
  [ -n "$liblz4" ] || { say "no liblz4.so.1 here (Debian: liblz4-1): pack needs it"; exit 1; }
  liblz4=$(readlink -f "$liblz4")
  cp "$liblz4" "$stage/lib/liblz4.so.1"
  cp docker/fatbin-lz.py "$stage/fatbin-lz.py"

  local ort=ai/onnxruntime/native/linux-x64
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  unzip -q -o "$jar" "$ort/libonnxruntime.so" "$ort/libonnxruntime_providers_shared.so" \
    "$ort/libonnxruntime_providers_cuda.so" -d "$tmp" 2>/dev/null || true
  cp "$tmp/$ort/libonnxruntime.so" "$stage/ort/"
  if [ $rehearsal = 1 ]; then
    # Stand-ins with the real names and sonames: the layout, the loader and the unpacking are
    # what is rehearsed. The three big ones carry a fatbin of LZ4-compressed entries, laid out as
    # nvcc writes them, so that they travel as the real ones do (fatbin-lz.py split here, join on
    # the host), and 12 MiB of noise each (the loader ignores bytes past the section headers) so
    # that, as the real ones do, they fill a second piece and one crosses from the first into it.
    stub_library libonnxruntime_providers_shared.so "$stage/ort/libonnxruntime_providers_shared.so"
    for so in libcudart.so.12 libcurand.so.10; do stub_library "$so" "$stage/cuda12/$so"; done
    for unit in ort/libonnxruntime_providers_cuda.so cuda12/libcublas.so.12 cuda12/libcublasLt.so.12; do
      stub_library "$(basename "$unit")" "$tmp/stub.so"
      python3 - "$liblz4" "$tmp/stub.so" "$tmp/fatbin" "$root/docker/fatbin-lz.py" <<'PY'
import importlib.util, struct, sys
spec = importlib.util.spec_from_file_location("fatbin_lz", sys.argv[4])
lz = importlib.util.module_from_spec(spec); spec.loader.exec_module(lz)
lz4, body = lz.Lz4(sys.argv[1]), b""
for k in (1, 3):  # two sm_90 "cubins": the stub's own bytes, repeated
    raw = open(sys.argv[2], "rb").read() * k
    packed = lz4.compress(raw)
    padded = packed + bytes(-len(packed) % 8)
    # kind, -, header size, payload size, compressed size, -, minor, major, arch, name offset and
    # length, flags (0x2000: compressed), -, uncompressed size
    body += struct.pack("<HHIQIIHHIIIQQQ", 2, 0x101, 64, len(padded), len(packed), 0, 7, 1, 90, 0, 0,
                        0x2011, 0, len(raw)) + padded
open(sys.argv[3], "wb").write(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body)
PY
      objcopy --add-section .nv_fatbin="$tmp/fatbin" "$tmp/stub.so"
      head -c $((12 * 1024 * 1024)) /dev/urandom >> "$tmp/stub.so"
      to_transport "$tmp/stub.so" "$units/$unit.lzr.xz"
    done
    python3 -c 'import json,sys; json.dump({"rehearsal": True}, open(sys.argv[1], "w"))' "$stage/payload.json"
  else
    [ -f "$tmp/$ort/libonnxruntime_providers_cuda.so" ] \
      || { say "$jar has no libonnxruntime_providers_cuda.so: it is not the -Pcuda build"; exit 1; }
    cp "$tmp/$ort/libonnxruntime_providers_shared.so" "$stage/ort/"
    docker/fetch-cuda12-libs.sh "$tmp/cuda12"
    # awk matches and reads to the end itself (a `| grep -q` that exits early fails the pipeline
    # under pipefail, and this `if` would then miss the import it looks for)
    if readelf --dyn-syms -W "$tmp/$ort/libonnxruntime_providers_cuda.so" \
        | awk '$7 == "UND" && tolower($8) ~ /curand/ {found = 1} END {exit !found}'; then
      say "the CUDA provider imports from libcurand.so.10: ship the real one"; exit 1
    fi
    stub_library libcurand.so.10 "$stage/cuda12/libcurand.so.10"
    cp "$tmp/cuda12/libcudart.so.12" "$stage/cuda12/"
    cut_and_compress "$tmp/$ort/libonnxruntime_providers_cuda.so" "$units/ort/libonnxruntime_providers_cuda.so.lzr.xz"
    cut_and_compress "$tmp/cuda12/libcublas.so.12" "$units/cuda12/libcublas.so.12.lzr.xz"
    cut_and_compress "$tmp/cuda12/libcublasLt.so.12" "$units/cuda12/libcublasLt.so.12.lzr.xz"
    python3 -c 'import json,sys; json.dump({"rehearsal": False, "archs": sys.argv[2]}, open(sys.argv[1], "w"))' \
      "$stage/payload.json" "$archs"
  fi
  say "compressing the runtime, jar, tests and small libraries"
  tar -C "$stage" -cf - . | xz -T0 "${xz_opts[@]}" > "$units/app.tar.xz"
  python3 - "$units" "$out" "$piece" "$max_pieces" <<'PY'
# Pieces: plain tar files, each holding MANIFEST.json and chunks of the units (app.tar.xz first,
# then each compressed library), filled in order so that only the last piece is short.
import hashlib, io, json, os, sys, tarfile
units_dir, out, limit, max_pieces = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
room = limit - 256 * 1024  # tar headers and the manifest
names = ["app.tar.xz"] + sorted(os.path.relpath(os.path.join(d, f), units_dir)
                                for d, _, fs in os.walk(units_dir) for f in fs if f != "app.tar.xz")
pieces, units, current = [[]], [], 0
digest = hashlib.sha256()
for name in names:
    path, size, done = os.path.join(units_dir, name), os.path.getsize(os.path.join(units_dir, name)), 0
    unit = {"name": name, "size": size, "chunks": []}
    while done < size:
        if current == room:
            pieces.append([]); current = 0
        n = min(size - done, room - current)
        pieces[-1].append((name, len(unit["chunks"]), path, done, n))
        unit["chunks"].append(len(pieces))
        done += n; current += n
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            digest.update(block)
    units.append(unit)
count = len(pieces)
manifest = json.dumps({"pack": digest.hexdigest()[:16], "pieces": count, "units": units}, indent=1).encode()
os.makedirs(out, exist_ok=True)
for k, chunks in enumerate(pieces, 1):
    with tarfile.open(f"{out}/radixserve-gpu-{k}-of-{count}.tar", "w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("MANIFEST.json"); info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))
        for name, index, path, offset, n in chunks:
            with open(path, "rb") as f:
                f.seek(offset)
                info = tarfile.TarInfo(f"chunks/{name}.{index:03d}"); info.size = n
                tar.addfile(info, io.BytesIO(f.read(n)))
sizes = [os.path.getsize(f"{out}/radixserve-gpu-{k}-of-{count}.tar") for k in range(1, count + 1)]
mib = lambda b: f"{b / 2**20:.1f}"
print(f"gpu-payload: {count} pieces, " + " + ".join(mib(s) for s in sizes) + f" = {mib(sum(sizes))} MiB"
      f" (limit {max_pieces} pieces of {mib(limit)} MiB), in {out}:", file=sys.stderr)
for k, chunks in enumerate(pieces, 1):
    print(f"  radixserve-gpu-{k}-of-{count}.tar  {mib(sizes[k - 1]):>5} MiB  "
          + ", ".join(f"{name}" + (f" (part {i + 1})" if len(next(u for u in units if u["name"] == name)["chunks"]) > 1 else "")
                      for name, i, *_ in chunks), file=sys.stderr)
if max(sizes) > limit or count > max_pieces:
    sys.exit(f"gpu-payload: over the limit of {max_pieces} pieces of {mib(limit)} MiB")
PY
  rm -rf "$units"
}

# Unpacks what has arrived: new pieces' chunks are set aside, and every unit whose chunks are all
# there is decompressed into PAYLOAD_DIR/unpacked. Prints what is still missing.
unpack() {  # $1 payload dir
  python3 - "$1" <<'PY'
import glob, importlib.util, io, json, lzma, os, shutil, sys, tarfile
d = sys.argv[1]
work, chunks = os.path.join(d, "unpacked"), os.path.join(d, "unpacked", ".chunks")
state_file = os.path.join(work, ".state.json")
paths = sorted(glob.glob(os.path.join(d, "radixserve-gpu-*-of-*.tar")))
if not paths:
    sys.exit(f"gpu-payload: no radixserve-gpu-*-of-*.tar in {d}")
manifests = {}
for p in paths:
    with tarfile.open(p) as tar:
        manifests[p] = json.load(tar.extractfile("MANIFEST.json"))
packs = {m["pack"] for m in manifests.values()}
if len(packs) > 1:
    sys.exit("gpu-payload: pieces of different packs in " + d + ": "
             + ", ".join(f"{os.path.basename(p)} ({m['pack']})" for p, m in manifests.items()))
manifest = next(iter(manifests.values()))
state = json.load(open(state_file)) if os.path.exists(state_file) else {}
if state.get("pack") != manifest["pack"]:
    shutil.rmtree(work, ignore_errors=True)
    state = {"pack": manifest["pack"], "pieces": [], "units": []}
os.makedirs(chunks, exist_ok=True)
for p in paths:
    name = os.path.basename(p)
    if name in state["pieces"]:
        continue
    with tarfile.open(p) as tar:
        for member in tar.getmembers():
            if member.name.startswith("chunks/"):
                target = os.path.join(chunks, member.name[len("chunks/"):].replace("/", "__"))
                with tar.extractfile(member) as src, open(target + ".tmp", "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 24)
                os.replace(target + ".tmp", target)
    state["pieces"].append(name)
    json.dump(state, open(state_file, "w"))

class Joined(io.RawIOBase):
    """The chunks of a unit read back to back, without joining them on disk."""
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

def target(name):
    return name[:-len(".lzr.xz")] if name.endswith(".lzr.xz") else name[:-len(".xz")]

missing = []
for unit in manifest["units"]:
    name = unit["name"]
    if name in state["units"]:
        continue
    parts = [os.path.join(chunks, f"{name.replace('/', '__')}.{i:03d}") for i in range(len(unit["chunks"]))]
    # a library in transport form is joined by app.tar.xz's fatbin-lz.py and liblz4
    waits_for_app = name.endswith(".lzr.xz") and "app.tar.xz" not in state["units"]
    if waits_for_app or not all(os.path.exists(p) for p in parts):
        wanted = sorted(set(unit["chunks"]))
        missing.append(f"{target(name)} (piece{'s' if len(wanted) > 1 else ''} "
                       + ", ".join(f"{k} of {manifest['pieces']}" for k in wanted)
                       + (", after app.tar" if waits_for_app else "") + ")")
        continue
    how = ""
    with lzma.open(io.BufferedReader(Joined(parts), 1 << 20)) as xz:
        if name == "app.tar.xz":
            with tarfile.open(fileobj=xz, mode="r|") as tar:
                if hasattr(tarfile, "tar_filter"):  # Python >= 3.12 and backports: refuse odd members
                    tar.extractall(work, filter="tar")
                else:
                    tar.extractall(work)
        else:
            path = os.path.join(work, target(name))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if name.endswith(".lzr.xz"):
                spec = importlib.util.spec_from_file_location("fatbin_lz", os.path.join(work, "fatbin-lz.py"))
                fatbin_lz = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(fatbin_lz)
                entries = fatbin_lz.join(fatbin_lz.Lz4(os.path.join(work, "lib", "liblz4.so.1")), xz, path + ".tmp")
                how = f" ({entries} fatbin entries compressed again, SHA-256 as packed)"
            else:
                with open(path + ".tmp", "wb") as dst:
                    shutil.copyfileobj(xz, dst, 1 << 24)
            os.chmod(path + ".tmp", 0o755)
            os.replace(path + ".tmp", path)
    for p in parts:
        os.remove(p)
    state["units"].append(name)
    json.dump(state, open(state_file, "w"))
    print(f"gpu-payload: unpacked {name}{how}", file=sys.stderr)
have = sorted(int(os.path.basename(p).split("-")[2]) for p in paths)
print(f"gpu-payload: have piece{'s' if len(have) > 1 else ''} {', '.join(map(str, have))} of {manifest['pieces']}"
      + (f"; waiting for: {'; '.join(missing)}" if missing else "; all unpacked"), file=sys.stderr)
with open(os.path.join(work, ".missing"), "w") as f:
    f.write("".join(m + "\n" for m in missing))
PY
}

case "$cmd" in
  pack)
    shift
    pack "$@"
    ;;
  run)
    dir=$(cd "${2:-$root/gpu-payload}" && pwd)
    unpack "$dir"
    export RADIXSERVE_GPU_REPORTS=${RADIXSERVE_GPU_REPORTS:-$dir/reports}
    [ -f "$dir/unpacked/run-gpu.sh" ] \
      || { say "run-gpu.sh comes with app.tar (piece 1), which has not all arrived"; exit 4; }
    exec bash "$dir/unpacked/run-gpu.sh" "$dir/unpacked" "${@:3}"
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
