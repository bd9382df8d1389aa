#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium for the /cache browser test when it is missing
# (the test drives it over the DevTools protocol, so no chromium-driver is needed).
# Prints the browser's path. Needs root and apt-get when Chromium is missing.
set -euo pipefail
for c in chromium chromium-browser; do
  if command -v "$c" >/dev/null; then command -v "$c"; exit 0; fi
done
echo "install-chromium: installing Debian's chromium package" >&2
apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium
