#!/usr/bin/env bash
# Installs Debian packages for a CI script: apt-get update first (a fresh machine has no package
# lists), no recommends, waiting up to 5 minutes for another apt-get to finish. While it runs,
# a policy-rc.d that exits 101 (made only when none exists, removed after) keeps the packages'
# system services from starting. Needs root.
#   bash .ci/apt-install.sh PACKAGE...
set -euo pipefail
created_policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  created_policy=1
fi
trap '[ -z "$created_policy" ] || rm -f /usr/sbin/policy-rc.d' EXIT
apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q \
  --no-install-recommends "$@" >/dev/null
