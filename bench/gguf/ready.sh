#!/bin/bash
# Seconds from starting a server to its first 200 on /health, then its VmRSS and VmHWM (2 s
# later); the server is stopped after. Its output goes to ready-NAME.log in the current folder.
#
#   bench/gguf/ready.sh NAME PORT COMMAND...
#
# e.g. bench/gguf/ready.sh llama 8081 llama-server -m F.gguf --port 8081 -t 2 -c 4096
set -u
name=$1; port=$2; shift 2
t0=$(date +%s.%N)
"$@" > "ready-$name.log" 2>&1 &
pid=$!
until curl -sf -o /dev/null "localhost:$port/health"; do
  kill -0 $pid 2>/dev/null || { echo "$name exited before it was ready" >&2; exit 1; }
  sleep 0.2
done
t1=$(date +%s.%N)
sleep 2
echo "$name ready $(echo "$t1 - $t0" | bc) s; $(grep -E 'VmRSS|VmHWM' /proc/$pid/status | tr -s ' \t' ' ' | tr '\n' ' ')"
kill $pid
wait $pid 2>/dev/null
