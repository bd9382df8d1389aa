#!/usr/bin/env bash
# A new user's first command, as the README writes it, from a fresh clone on a machine whose
# default java is older than 25: JDK 17 first on PATH and no JAVA_HOME (stricter than the README,
# which asks for JAVA_HOME: ./mvnw and ./radixserve must find the JDK 25 themselves). Passes when
# the server it starts answers 200 on /health. Also checks that ./radixserve ignores a JAVA_HOME
# that points at the older JDK, and runs the README's "Call it" examples against the server
# (.ci/quick-start.sh). Clones HEAD: commit first to test uncommitted changes.
# Usage: .ci/first-run.sh [OLD_JDK_HOME]   (default /usr/lib/jvm/java-17-openjdk-amd64)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
old_jdk=${1:-/usr/lib/jvm/java-17-openjdk-amd64}
if [ ! -x "$old_jdk/bin/java" ]; then
  echo "first-run: no older JDK at $old_jdk; pass one as the first argument" >&2
  exit 1
fi
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill -- "-$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

git clone -q "$repo" "$work/radixserve"
cd "$work/radixserve"
# the first sh block under "## The two commands", verbatim
command=$(awk '/^## The two commands/ {on = 1} on && /^```sh/ {getline; print; exit}' README.md)
case "$command" in
  ./mvnw*'&& ./radixserve serve'*) ;;
  *) echo "first-run: the README's first command is not build + ./radixserve serve: $command" >&2
     exit 1 ;;
esac
echo "first-run: $command"
export PATH="$old_jdk/bin:$PATH"
unset JAVA_HOME
java -version 2>&1 | head -1 | sed 's/^/first-run: default java: /'
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# the address comes from the environment so that the command itself stays the README's
RADIXSERVE_HOST=127.0.0.1 RADIXSERVE_PORT=$port setsid sh -c "$command" >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 600); do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "first-run: the command exited before /health answered:" >&2
    tail -40 "$work/serve.log" >&2
    exit 1
  fi
  status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health" || true)
  if [ "$status" = 200 ]; then break; fi
  sleep 0.5
done
if [ "${status:-}" != 200 ]; then
  echo "first-run: /health never answered 200 (last: ${status:-none})" >&2
  tail -40 "$work/serve.log" >&2
  exit 1
fi

echo "first-run: /health 200 on port $port"
# the README's curl and SDK examples against that server
# (on a failure, the server's log says what it saw: an error event names the request)
bash .ci/quick-start.sh "$port" README.md \
  || { echo "first-run: the server's log:" >&2; tail -60 "$work/serve.log" >&2; exit 1; }
# JAVA_HOME pointing at the older JDK: the launcher still runs the jar on a JDK 25
# (the output is kept before grep reads it: `cmd | grep -q` under pipefail fails when grep exits
# at its match while cmd is still writing)
version=$(JAVA_HOME="$old_jdk" ./radixserve --version) || true
grep -q '^JVM 2[5-9]' <<<"$version" \
  || { echo "first-run: ./radixserve with JAVA_HOME=$old_jdk did not run on Java 25+" >&2; exit 1; }
# no JDK 25 to be found (the launcher alone, without .ci/java-home.sh to search with): one line
# that says what to install, and a non-zero status
mkdir "$work/alone" && cp radixserve "$work/alone/"
if message=$(JAVA_HOME="$old_jdk" "$work/alone/radixserve" serve 2>&1); then
  echo "first-run: the launcher ran without a JDK 25" >&2; exit 1
fi
if [ "$(printf '%s\n' "$message" | wc -l)" != 1 ] || ! grep -q 'install a JDK 25' <<<"$message"; then
  echo "first-run: without a JDK 25 the launcher should say what to install in one line, said: $message" >&2
  exit 1
fi
echo "first-run: without a JDK 25: $message"
echo "first-run: ok"
