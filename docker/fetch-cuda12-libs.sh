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
# (the newest cuBLAS 12 on Maven Central: cuda-redist 12.9 has none)
# RADIXSERVE_CUDA_JARS=DIR uses jars already in DIR (any file names) instead of downloading.
set -euo pipefail
out=${1:?usage: fetch-cuda12-libs.sh OUT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"

jars=${RADIXSERVE_CUDA_JARS:-}
if [ -z "$jars" ]; then
  jars=$(mktemp -d)
  for artifact in org.bytedeco:cuda-redist:12.9-9.10-1.5.12:jar:linux-x86_64 \
                  org.bytedeco:cuda:12.6-9.5-1.5.11:jar:linux-x86_64-redist; do
    echo "fetch-cuda12-libs: downloading $artifact from Maven Central" >&2
    "$here/mvnw" -B -ntp -q -N dependency:copy -Dartifact="$artifact" -DoutputDirectory="$jars" \
      -Dmdep.overWriteReleases=true
  done
fi

# The first jar holding a library wins (cuda-redist 12.9 comes first, so its libcudart is the one
# kept). Extracted with the JDK's jar tool (Maven needs a JDK anyway; no python3 or unzip needed).
jar_tool="${JAVA_HOME:+$JAVA_HOME/bin/}jar"
listing=$(mktemp -d)
if [ -n "${RADIXSERVE_CUDA_JARS:-}" ]; then trap 'rm -rf "$listing"' EXIT; else trap 'rm -rf "$listing" "$jars"' EXIT; fi
ordered=$(ls "$jars" | awk '{print (/cuda-redist/ ? 0 : 1) "\t" $0}' | sort | cut -f2)
missing=()
for soname in libcudart.so.12 libcublas.so.12 libcublasLt.so.12 libcurand.so.10; do
  found=""
  for jar in $ordered; do
    case "$jar" in *.jar) ;; *) continue ;; esac
    [ -f "$listing/$jar" ] || "$jar_tool" tf "$jars/$jar" > "$listing/$jar"
    # libcudart.so.12 or libcudart.so.12.9.79, never libcudart.so.12.x.y.debug etc.
    member=$(grep -E "(^|/)${soname//./\\.}(\.[0-9]+)*\$" "$listing/$jar" | head -1 || true)
    [ -n "$member" ] || continue
    (cd "$listing" && "$jar_tool" xf "$jars/$jar" "$member")
    mv "$listing/$member" "$out/$soname"
    chmod 755 "$out/$soname"
    echo "fetch-cuda12-libs: $soname <- $jar!/$member" >&2
    found=1
    break
  done
  [ -n "$found" ] || missing+=("$soname")
done
[ ${#missing[@]} = 0 ] || { echo "fetch-cuda12-libs: not found in $jars: ${missing[*]}" >&2; exit 1; }
echo "fetch-cuda12-libs: done; export LD_LIBRARY_PATH=$(cd "$out" && pwd):\$LD_LIBRARY_PATH" >&2
