#!/usr/bin/env bash
# Runs the README's "Call it" examples (the curl commands, the Python and the Node SDK example)
# against a server already listening on 127.0.0.1:PORT, as .ci/first-run.sh starts it from the
# README's first command. Each must succeed and print what the example means to show: a
# completion's JSON, a stream ending in [DONE], the SDKs' text. The SDK examples need the
# clients .ci/install-sdks.sh installs (RADIXSERVE_SDK_PYTHON, RADIXSERVE_SDK_NODE_DIR); without
# them they are skipped with a message, or fail when RADIXSERVE_SDK_TESTS=1 (as in CI).
# Usage: .ci/quick-start.sh PORT [README]
set -euo pipefail
port=$1
readme=${2:-README.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the fenced blocks of the section, each into its own file: sh-1, python-1, js-1, ...
awk -v dir="$work" '
  /^## / { on = ($0 == "## Call it") }
  on && /^```[a-z]+$/ { lang = substr($0, 4); n[lang]++; file = dir "/" lang "-" n[lang]; next }
  on && /^```$/ { file = ""; next }
  file != "" { print > file }' "$readme"
for f in "$work"/sh-1 "$work"/python-1 "$work"/js-1; do
  [ -s "$f" ] || { echo "quick-start: no ${f##*/} block under '## Call it' in $readme" >&2; exit 1; }
done
sed -i "s#localhost:8000#127.0.0.1:$port#g" "$work"/*
# curl: one command per example (continuation lines joined), each run on its own
commands=$(python3 - "$work/sh-1" <<'PY'
import shlex, sys
command = ''
for line in open(sys.argv[1]):
    command += line
    try:
        shlex.split(command)
    except ValueError:  # an open quote: the command goes on
        continue
    if command.rstrip().endswith('\\'):
        continue
    if command.strip():
        print(' '.join(command.replace('\\\n', ' ').split()))
    command = ''
PY
)
[ "$(printf '%s\n' "$commands" | wc -l)" -ge 2 ] || { echo "quick-start: fewer than 2 curl examples" >&2; exit 1; }
i=0
while IFS= read -r command; do
  i=$((i + 1))
  out=$(bash -c "set -o pipefail; $command")
  case "$command" in
    *'"stream": true'*)
      # here-strings, not `printf | grep -q`: under pipefail a grep that matches and exits before
      # printf has written the rest fails the pipeline with printf's SIGPIPE (CI failed so once)
      tail -1 <<<"$out" | grep -qx 'data: \[DONE\]' \
        || { echo "quick-start: curl example $i did not end its stream with [DONE]: $out" >&2; exit 1; }
      grep -q '"prompt_tokens"' <<<"$out" \
        || { echo "quick-start: curl example $i has no usage chunk: $out" >&2; exit 1; } ;;
    *)
      printf '%s' "$out" | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["choices"][0]["text"] is not None' \
        || { echo "quick-start: curl example $i gave no completion: $out" >&2; exit 1; } ;;
  esac
  echo "quick-start: curl example $i ok"
done <<<"$commands"
sdk_missing() {
  if [ "${RADIXSERVE_SDK_TESTS:-}" = 1 ]; then echo "quick-start: $1" >&2; exit 1; fi
  echo "quick-start: skipped: $1"
}
# each SDK example runs as written, then one appended line checks the reply it printed
if [ -x "${RADIXSERVE_SDK_PYTHON:-}" ]; then
  echo 'assert r.choices[0].text is not None and isinstance(r.usage.prompt_tokens_details.cached_tokens, int), r' \
    >>"$work/python-1"
  "$RADIXSERVE_SDK_PYTHON" "$work/python-1" >/dev/null \
    || { echo "quick-start: the Python SDK example failed" >&2; exit 1; }
  echo "quick-start: Python SDK example ok"
else
  sdk_missing "no RADIXSERVE_SDK_PYTHON with the openai package (.ci/install-sdks.sh)"
fi
if [ -d "${RADIXSERVE_SDK_NODE_DIR:-}/node_modules/openai" ]; then
  echo 'if (typeof r.choices[0].text !== "string" || typeof r.usage.prompt_tokens_details.cached_tokens !== "number") { throw new Error(JSON.stringify(r)); }' \
    >>"$work/js-1"
  cp "$work/js-1" "$RADIXSERVE_SDK_NODE_DIR/readme-example.mjs"
  status=0
  (cd "$RADIXSERVE_SDK_NODE_DIR" && node readme-example.mjs >/dev/null) || status=$?
  rm -f "$RADIXSERVE_SDK_NODE_DIR/readme-example.mjs"
  [ "$status" = 0 ] || { echo "quick-start: the Node SDK example failed" >&2; exit 1; }
  echo "quick-start: Node SDK example ok"
else
  sdk_missing "no RADIXSERVE_SDK_NODE_DIR with the openai package (.ci/install-sdks.sh)"
fi
