#!/bin/sh
# Real Hugging Face hub tokenizers as GGUF vocabularies, with the ids Hugging Face's own
# tokenizers give for a fixed set of texts: llama.cpp's tokenizer test files, copied as they are
# from the llama.cpp tree node-llama-cpp 3.22.1 ships (bench/llamacpp/build.sh unpacks it to
# /work/llamacpp/src). llama.cpp's convert_hf_to_gguf_update.py made them from each model's hub
# repository: convert_hf_to_gguf.py --vocab-only (ggml-vocab-NAME.gguf: tokens, merges or scores,
# types, special ids, no tensors), the texts (NAME.gguf.inp, separated by
# "\n__ggml_vocab_test__\n") and transformers' AutoTokenizer(...).encode(text,
# add_special_tokens=False) of each (NAME.gguf.out, one line of " id" per text). llama.cpp's
# test-tokenizer-0 holds its own tokenizer against them; GgufHubVocabTest holds radixserve's.
#
#   sh copy_hub_vocabs.sh [LLAMACPP_SRC]
#
# llama-bpe: Meta-Llama-3-8B (Llama 3's byte-level BPE, 128k); qwen2: Qwen1.5-7B (Qwen2's);
# gpt-2: openai-community/gpt2; phi-3: Phi-3-mini-4k-instruct (SentencePiece, 32k); llama-spm:
# Llama-2-7b (SentencePiece, 32k).
set -eu
src=${1:-/work/llamacpp/src}
cd "$(dirname "$0")"
for name in llama-bpe qwen2 gpt-2 phi-3 llama-spm; do
  for ext in "" .inp .out; do
    cp "$src/models/ggml-vocab-$name.gguf$ext" .
  done
done
sha256sum -c <<'SUMS'
97272e430d53bc7688f52d5e0ad8ea8f163ede9f1bbd1694feaa504797d5d96e  ggml-vocab-llama-bpe.gguf
118abf2034a197fc5c9dec5204dfdeee7004c7c70952ae577f66b99e212fab9b  ggml-vocab-llama-bpe.gguf.out
44c2f46b715f585c6ab513970e8a006bfa5badd6108560054921cf598d154d8c  ggml-vocab-qwen2.gguf
de785bb305cc6fa9d43908ed5da337f853c0b79e971348fcfb9f0915a39c5363  ggml-vocab-qwen2.gguf.out
cedc56ca6e2e89f63e781696d1fd76b4b1d49e6720dee86463e915f6e90016ac  ggml-vocab-gpt-2.gguf
48e8c4cb3ad5c37915b225f872222567c1c4dd4d66951aa53460c8d152ff6d60  ggml-vocab-gpt-2.gguf.out
967d7190d11c4842eab697079d98d56c2116e10eb617be355a2733bfc132e326  ggml-vocab-phi-3.gguf
ad6905c925c49c022974fe67e030382e8a4f56eb4489a0b9481dcedb1ec73b29  ggml-vocab-phi-3.gguf.out
16c3724582d59aa8bf84711894e833f916ee46a31d80e21312759c48bf8d0e69  ggml-vocab-llama-spm.gguf
ad6905c925c49c022974fe67e030382e8a4f56eb4489a0b9481dcedb1ec73b29  ggml-vocab-llama-spm.gguf.out
be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0  ggml-vocab-llama-bpe.gguf.inp
SUMS
