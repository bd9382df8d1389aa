#!/usr/bin/env bash
# Speculative decoding, batch 1, on the Llama-3.2-1B shape at int8 (docs/benchmarks/journal/
# 2026-11-28-speculative.md): radixserve with --speculative off and ngram, and llama.cpp's
# llama-server (Q8_0 of the same weights) without and with its n-gram speculation, one server
# at a time, the variants interleaved in each round; workloads.py measures each.
#
#   bench/speculative/run.sh MODEL_DIR JAR OUT [ROUNDS] [VARIANTS...]
#     MODEL_DIR: the HF checkpoint (no tokenizer files: r50k_base ids);
#     JAR: server/target/radixserve.jar; OUT: results.jsonl and logs
#     VARIANTS: rs-off rs-ngram lc-off lc-ngram (default: all four); rs2-off / rs2-ngram run
#       the jar JAR2 names (an A/B of two builds in the same rounds, against rs-off)
#     env: THREADS (2), DECODE (96 tokens per request), LLAMA_CPP (/work/llamacpp/src),
#     FIRST_ROUND (1: rounds FIRST_ROUND..ROUNDS, each with contexts of its own), WORKLOADS,
#     CONCURRENCY, CONTEXT, REASK, GGUF, LLAMA_ARGS (more llama-server flags), MODEL_ARGS (radixserve's model flags; default
#     --quantization int8) (workloads.py)
# Even rounds run the variants in reverse order (A B, B A, ...), so a drift of the machine's load
# over a run weighs on both sides alike. At the end ratios.py prints, per workload, each round's
# ratio against the -off variant (tok/s, and the server's CPU time per token) and the median.
#
# Control A/B (the cost of --speculative ngram where nothing repeats), e.g. 6 rounds:
#   WORKLOADS=control,shared-prompt bench/speculative/run.sh MODEL_DIR JAR OUT 6 rs-off rs-ngram
# The GGUF (OUT/../bench-1b-q8_0.gguf, made once): convert_q8.py, after
# bench/llamacpp/gpt2_tokenizer_files.py wrote r50k_base's files beside a link to the weights.
set -u
model=$1
jar=$2
out=$3
rounds=${4:-1}
shift 4 2>/dev/null || shift $#
variants=${*:-rs-off rs-ngram lc-off lc-ngram}
threads=${THREADS:-2}
decode=${DECODE:-96}
lcpp=${LLAMA_CPP:-/work/llamacpp/src}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../.ci/java-home.sh"
gguf=${GGUF:-/tmp/spec1b/bench-1b-q8_0.gguf}
# the client encodes with the tokenizer the server reads: the checkpoint's own where it has one
# (make_8b.py writes Llama 3's), else r50k_base's files (TOKENIZER_DIR, workloads.py's default)
if [ -z "${TOKENIZER_DIR:-}" ] && [ -f "$model/tokenizer.json" ]; then
  export TOKENIZER_DIR=$model
fi
mkdir -p "$out"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null' EXIT
reversed=$(echo $variants | tr ' ' '\n' | tac | tr '\n' ' ')
for r in $(seq "${FIRST_ROUND:-1}" "$rounds"); do
  order=$variants
  [ $((r % 2)) -eq 0 ] && order=$reversed
  for v in $order; do
    port=$((20000 + RANDOM % 20000))
    case $v in
      rs-*|rs2-*) vjar=$jar; [ "${v%%-*}" = rs2 ] && vjar=$JAR2
        java -Xmx2g --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector \
          -jar "$vjar" serve --model "$model" --host 127.0.0.1 --port "$port" --threads "$threads" \
          ${MODEL_ARGS:---quantization int8} --kv-cache-memory 512m --speculative "${v#*-}" \
          > "$out/$v-$r.log" 2>&1 & ;;
      lc-off) "$lcpp/build/bin/llama-server" -m "$gguf" --host 127.0.0.1 --port "$port" \
          -t "$threads" -tb "$threads" -c 4096 -np 1 --no-repack ${LLAMA_ARGS:-} \
          > "$out/$v-$r.log" 2>&1 & ;;
      # n-gram lookup over the slot's own tokens (prompt and output): 3-token keys, drafts of
      # up to 8 tokens, as radixserve's prompt lookup
      lc-ngram) "$lcpp/build/bin/llama-server" -m "$gguf" --host 127.0.0.1 --port "$port" \
          -t "$threads" -tb "$threads" -c 4096 -np 1 --no-repack --spec-type ngram-simple \
          --spec-ngram-simple-size-n 3 --spec-ngram-simple-size-m 8 ${LLAMA_ARGS:-} \
          > "$out/$v-$r.log" 2>&1 & ;;
      *) echo "unknown variant $v" >&2; exit 2 ;;
    esac
    pid=$!
    for _ in $(seq 1 1200); do
      # a server that died (a port another process held) must not leave the port's owner measured
      kill -0 "$pid" 2>/dev/null || { echo "$v round $r: the server exited, see $out/$v-$r.log" >&2
        exit 1; }
      curl -sf "127.0.0.1:$port/health" > /dev/null && break
      sleep 0.5
    done
    echo "$(date -u +%T) $v round $r up (load $(cut -d' ' -f1 /proc/loadavg))"
    SERVER_PID=$pid python3 "$here/workloads.py" "http://127.0.0.1:$port" "$r" "$decode" \
      2>> "$out/err.log" \
      | while read -r line; do
          echo "{\"variant\":\"$v\",\"round\":$r,${line#\{}" >> "$out/results.jsonl"
          echo "  $line"
        done
    if [ "${v%%-*}" = rs ] || [ "${v%%-*}" = rs2 ]; then
      curl -s "127.0.0.1:$port/metrics" | grep '^radixserve_spec_' > "$out/$v-$r.metrics"
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null
    pid=
  done
done
python3 "$here/ratios.py" "$out/results.jsonl"
