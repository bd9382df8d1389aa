#!/usr/bin/env bash
# Installs the official OpenAI SDKs for OpenAiSdkTest (structured outputs and tool calls through
# the clients people use): Python's `openai` + `pydantic` in a venv (from the local wheel mirror
# /opt/pypi when the machine has one, else the default index), Node's `openai` + `zod` with npm.
# The same venv gets the libraries the gateways read radixserve with, for the gateway contract
# tests (docs/gateway-compat.md): prometheus_client (production-stack's metrics parser), pyzmq
# and msgspec (vLLM's KV event transport and decoder).
# Prints the environment the test reads, for `eval`. Test-only: nothing here reaches the server.
set -euo pipefail
dir="${1:-$(pwd)/server/target/sdk}"
mkdir -p "$dir"
index=()
if [ -d /opt/pypi/simple ]; then index=(--index-url file:///opt/pypi/simple); fi
if [ ! -x "$dir/venv/bin/python" ]; then python3 -m venv "$dir/venv" >&2; fi
"$dir/venv/bin/pip" install -q "${index[@]}" openai==3.22.1 pydantic==2.13.5 \
  prometheus-client==0.26.0 pyzmq==27.2.0 msgspec==0.22.0 >&2
mkdir -p "$dir/node"
if [ ! -d "$dir/node/node_modules/openai" ]; then
  (cd "$dir/node" && echo '{"private":true,"type":"module"}' > package.json \
    && npm install --silent --no-audit --no-fund openai@6.49.0 zod@4.6.7 >&2)
fi
echo "export RADIXSERVE_SDK_PYTHON=$dir/venv/bin/python RADIXSERVE_SDK_NODE_DIR=$dir/node"
