# Sourced by compare.sh and quick.sh (and bench/gguf/compare.sh and q4k-ab.sh, for stop and
# kib): starts one server of the comparison in the background, and stops it.
#
#   launch VARIANT PORT THREADS LOG      (sets $pid; needs $work, $jar and $java)
#   stop                                 (ends the server $pid names, if any, and clears it)
#
# VARIANT: rs-none|rs-int8|rs-int4 (radixserve with its defaults: an int8 LM head in both
# quantized modes), rs-int4-head (int4 with an int4 head), any of those followed by serve flags
# after colons (rs-int4:--quantization-block-size:64), a radixserve mode served from another
# directory after an @ (rs-none@/tmp/gpt2-small-gptq: a GPTQ checkpoint of the same shape),
# lc-f32|lc-q8_0|lc-q4_0 (llama-server, 16 slots of 1,024 tokens). radixserve variants run with
# --speculative off unless they give --speculative themselves (rs-int4:--speculative:auto).
launch() {
  local mode extra model
  mode=${1%%:*}
  extra=
  [ "$mode" != "$1" ] && extra=$(echo "${1#*:}" | tr ':' ' ')
  model=$work/gpt2-small
  if [[ $mode == *@* ]]; then
    model=${mode#*@}
    mode=${mode%%@*}
  fi
  # rs-int4-head: a name kept for earlier results, the same as rs-int4:--quantization-lm-head:true
  if [ "$mode" = rs-int4-head ]; then
    mode=rs-int4
    extra="--quantization-lm-head true $extra"
  fi
  # drafting off unless the variant says otherwise: llama-server drafts nothing by default, and a
  # random model's looping answers make n-gram drafts a measure of the model, not the kernels
  # (docs/benchmarks/journal/2026-11-29f-rows-by-page.md)
  [[ $extra == *--speculative* ]] || extra="--speculative off $extra"
  case $mode in
    rs-*) $java -Xmx2g -jar "$jar" serve --model "$model" --host 127.0.0.1 \
        --port "$2" --threads "$3" --quantization "${mode#rs-}" $extra > "$4" 2>&1 & ;;
    lc-*) "$work/src/build/bin/llama-server" -m "$work/gguf/gpt2-small-${1#lc-}.gguf" \
        --host 127.0.0.1 --port "$2" -t "$3" -tb "$3" -c 16384 -np 16 > "$4" 2>&1 & ;;
    *) echo "unknown variant $1" >&2; return 2 ;;
  esac
  pid=$!
}

# kib FIELD: the server $pid's /proc status field (VmRSS, VmHWM, ...) in KiB
kib() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$pid/status"; }

stop() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    pid=
  fi
}
