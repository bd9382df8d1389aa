#!/usr/bin/env bash
# GPTQ/AWQ checkpoints served on their own blocks beside the float checkpoint quantized at load,
# one server at a time on one thread (docs/benchmarks/journal/2026-11-21-to-28.md, "Pre-quantized GPTQ and AWQ checkpoints"):
# per server its start (launch to /health), resident memory after start, and
# bench/llamacpp/measure.py's batch-1 decode and 512-token prefill; ROUNDS rounds, interleaved.
#
# usage: compare.sh OUT ROUNDS NAME[@JAR]=DIR[:FLAG,FLAG...] ...
#   e.g. compare.sh /tmp/pq 3 int4-b128=/tmp/ls-f16:--quantization,int4,--quantization-block-size,128 \
#        gptq=/tmp/ls-gptq awq=/tmp/ls-awq
# RADIXSERVE_JAR (default server/target/radixserve.jar), or per server @JAR (two builds on one
# checkpoint: bench/prequantized/split-groups.sh); writes OUT/results.jsonl.
set -euo pipefail
out=$1; rounds=$2; shift 2
jar=${RADIXSERVE_JAR:-server/target/radixserve.jar}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
port=18471
for round in $(seq 1 "$rounds"); do
  for spec in "$@"; do
    name=${spec%%=*}; rest=${spec#*=}; dir=${rest%%:*}
    server_jar=$jar; [[ $name == *@* ]] && { server_jar=${name#*@}; name=${name%%@*}; }
    flags=(); [[ $rest == *:* ]] && IFS=, read -r -a flags <<< "${rest#*:}"
    # a server left on the port would answer for the new one (which then fails to bind)
    ! curl -sf "127.0.0.1:$port/health" > /dev/null || { echo "port $port is in use"; exit 1; }
    start=$(date +%s.%N)
    java -Xss64m --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -jar "$server_jar" \
      serve --model "$dir" --port $port --threads 1 "${flags[@]}" > "$out/$name.$round.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do
      curl -sf "127.0.0.1:$port/health" > /dev/null && break
      kill -0 $pid 2> /dev/null || { echo "$name died: $(tail -3 "$out/$name.$round.log")"; exit 1; }
      sleep 0.1
    done
    ready=$(date +%s.%N)
    rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
    m=$(python3 "$here/../llamacpp/measure.py" "http://127.0.0.1:$port" 3 128 "$round" $pid)
    kill $pid; wait $pid 2> /dev/null || true
    python3 -c 'import json,sys; m=json.loads(sys.argv[4]); m.update(name=sys.argv[1], round=int(sys.argv[2]), start_s=float(sys.argv[3]), rss_kb=int(sys.argv[5])); print(json.dumps(m))' \
      "$name" "$round" "$(echo "$ready - $start" | bc)" "$m" "$rss" >> "$out/results.jsonl"
    echo "round $round $name done"
  done
done
