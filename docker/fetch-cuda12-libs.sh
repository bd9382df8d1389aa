#!/usr/bin/env bash
# Fetches the CUDA 12 user-space libraries ONNX Runtime's CUDA provider loads (cuDNN excluded: the
# provider runs with enable_cudnn=0) from Maven Central, as Bytedeco's redistribution jars, and
# extracts the shared objects into one folder to put on LD_LIBRARY_PATH. The NVIDIA driver
# (libcuda.so.1) is not among them: it comes with the host.
#
#   docker/fetch-cuda12-libs.sh OUT_DIR
#   export LD_LIBRARY_PATH=OUT_DIR:$LD_LIBRARY_PATH
#
# Sources (Maven Central, org.bytedeco):
#   cuda-redist:12.9-9.10-1.5.12:linux-x86_64  libcudart.so.12 (>= 12.9, what ORT 1.29 needs)
#   cuda:12.6-9.5-1.5.11:linux-x86_64-redist   libcublas.so.12, libcublasLt.so.12, libcurand.so.10
#                                              (and libcufft.so.11 where the jar has it)
# RADIXSERVE_CUDA_JARS=DIR uses jars already in DIR (any file names) instead of downloading.
set -euo pipefail
out=${1:?usage: fetch-cuda12-libs.sh OUT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"

jars=${RADIXSERVE_CUDA_JARS:-}
if [ -z "$jars" ]; then
  jars=$(mktemp -d)
  trap 'rm -rf "$jars"' EXIT
  for artifact in org.bytedeco:cuda-redist:12.9-9.10-1.5.12:jar:linux-x86_64 \
                  org.bytedeco:cuda:12.6-9.5-1.5.11:jar:linux-x86_64-redist; do
    echo "fetch-cuda12-libs: downloading $artifact from Maven Central" >&2
    "$here/mvnw" -B -ntp -q dependency:copy -Dartifact="$artifact" -DoutputDirectory="$jars" \
      -Dmdep.overWriteReleases=true
  done
fi

# One pass over every jar: the first jar holding a library wins (cuda-redist 12.9 comes first, so
# its libcudart is the one kept).
python3 - "$jars" "$out" <<'PY'
import os, re, sys, zipfile
jars, out = sys.argv[1], sys.argv[2]
wanted = {  # soname -> required
    "libcudart.so.12": True, "libcublas.so.12": True, "libcublasLt.so.12": True,
    "libcurand.so.10": True, "libcufft.so.11": False,
}
found = {}
for jar in sorted(os.listdir(jars), key=lambda n: (0 if "cuda-redist" in n else 1, n)):
    path = os.path.join(jars, jar)
    if not zipfile.is_zipfile(path):
        continue
    with zipfile.ZipFile(path) as z:
        for member in z.namelist():
            name = os.path.basename(member)
            for soname in wanted:
                # libcudart.so.12 or libcudart.so.12.9.79, never libcudart.so.12.x.y.debug etc.
                if soname in found or not re.fullmatch(re.escape(soname) + r"(\.\d+)*", name):
                    continue
                target = os.path.join(out, soname)
                with z.open(member) as src, open(target, "wb") as dst:
                    dst.write(src.read())
                os.chmod(target, 0o755)
                found[soname] = f"{jar}!/{member}"
missing = [s for s, required in wanted.items() if required and s not in found]
for soname, origin in sorted(found.items()):
    print(f"fetch-cuda12-libs: {soname} <- {origin}", file=sys.stderr)
if missing:
    sys.exit(f"fetch-cuda12-libs: not found in {jars}: {', '.join(missing)}")
PY
echo "fetch-cuda12-libs: done; export LD_LIBRARY_PATH=$(cd "$out" && pwd):\$LD_LIBRARY_PATH" >&2
