#!/bin/sh
# Builds llama.cpp's llama-server and llama-quantize from the source that ships inside the npm
# package node-llama-cpp (llama/gitRelease.bundle: a git bundle of llama.cpp's tree), and a
# Python venv for its convert_hf_to_gguf.py. Everything goes to WORK (default /work/llamacpp),
# outside the repository. Needs npm, git, cmake, g++ (apt-get install cmake g++ if missing).
#
#   bench/llamacpp/build.sh [WORK] [NODE_LLAMA_CPP_VERSION]
#
# Pip installs come from the local index (this machine has no PyPI): PIP_INDEX (default
# file:///opt/pypi/simple) and a torch wheel from TORCH_WHEEL (default /opt/wheels/torch-*.whl).
set -eu
work=${1:-/work/llamacpp}
version=${2:-3.22.1}
index=${PIP_INDEX:-file:///opt/pypi/simple}
mkdir -p "$work"
cd "$work"
if [ ! -d src ]; then
  npm pack "node-llama-cpp@$version"
  tar xzf "node-llama-cpp-$version.tgz"
  cat package/llama/llama.cpp.info.json
  git clone -q package/llama/gitRelease.bundle src
fi
cd src
cmake -B build -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF
cmake --build build -j"${JOBS:-2}" --target llama-server llama-quantize llama-perplexity
cd "$work"
if [ ! -x venv/bin/python ]; then
  python3 -m venv venv
  # convert_hf_to_gguf.py imports torch; gguf-py comes from llama.cpp's own tree (src/gguf-py)
  venv/bin/pip install -q ${TORCH_WHEEL:-$(ls /opt/wheels/torch-*.whl | head -1)} --index-url "$index"
  venv/bin/pip install -q --index-url "$index" numpy sentencepiece transformers protobuf pyyaml \
    tqdm requests safetensors
fi
echo "built: $work/src/build/bin/llama-server, $work/src/build/bin/llama-quantize; python: $work/venv"
