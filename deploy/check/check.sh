#!/usr/bin/env bash
# Validates deploy/kubernetes (schemas and cross-references, see validate.mjs) without a cluster.
# Installs the pinned npm packages of package-lock.json first; needs Node.js and npm (installed
# from Debian's packages when missing).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
fi
npm ci --no-audit --no-fund --loglevel=error >/dev/null
node validate.mjs --self-test
