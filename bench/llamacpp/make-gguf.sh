#!/bin/sh
# The GPT-2-small-shaped checkpoint radixserve benches (random weights, seed 0, F32 safetensors,
# the same as QuantBench's and DecodeStepBench's gpt2-small) in WORK/gpt2-small, and the same
# weights as GGUF for llama.cpp: convert_hf_to_gguf.py to F32 and F16, llama-quantize to Q8_0
# and Q4_0, in WORK/gguf. Run from the repository root after build.sh.
#
#   bench/llamacpp/make-gguf.sh [WORK]
set -eu
work=${1:-/work/llamacpp}
repo=$(pwd)
. "$repo/.ci/java-home.sh"
if [ ! -f "$work/gpt2-small/model.safetensors" ]; then
  ./mvnw -B -ntp -q -pl model-runtime -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
  cp="model-runtime/target/classes:model-runtime/target/test-classes:$(cat model-runtime/target/cp.txt)"
  java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Xmx3g -cp "$cp" \
    dev.radixserve.model.RandomCheckpointTool gpt2-small "$work/gpt2-small" F32
fi
# radixserve serves a directory without tokenizer files with GPT-2's vocabulary; the converter
# needs the files: the same vocabulary written out, beside links to the same weights
src="$work/gpt2-small-gguf-src"
mkdir -p "$src" "$work/gguf"
ln -sf "$work/gpt2-small/model.safetensors" "$src/model.safetensors"
ln -sf "$work/gpt2-small/config.json" "$src/config.json"
jar=$(find "$HOME/.m2/repository/com/knuddels/jtokkit" -name 'jtokkit-*.jar' | head -1)
python3 "$repo/bench/llamacpp/gpt2_tokenizer_files.py" "$jar" "$src"
cd "$work/src"
for t in f32 f16; do
  [ -f "$work/gguf/gpt2-small-$t.gguf" ] || "$work/venv/bin/python" convert_hf_to_gguf.py "$src" \
    --outtype "$t" --outfile "$work/gguf/gpt2-small-$t.gguf"
done
for q in Q8_0 Q4_0; do
  lower=$(echo "$q" | tr 'A-Z' 'a-z')
  build/bin/llama-quantize "$work/gguf/gpt2-small-f32.gguf" "$work/gguf/gpt2-small-$lower.gguf" "$q" 2
done
ls -la "$work/gguf"
