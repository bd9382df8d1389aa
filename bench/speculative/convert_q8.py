#!/usr/bin/env python3
"""Runs llama.cpp's convert_hf_to_gguf.py on a checkpoint whose tokenizer is a byte-level BPE
with GPT-2's pre-tokenizer: GPT-2's own files (bench/llamacpp/gpt2_tokenizer_files.py, saved as
a fast tokenizer) or the copy model's (train_copy_llama.py: `tokenizers`' ByteLevelBPETokenizer,
whose pre-tokenizer is GPT-2's regex split). The converter recognises a pre-tokenizer by hashing
the ids its test string encodes to, so a vocabulary of its own (or transformers 5's re-saved
GPT-2 files) is not in its table; its check is told the answer ("gpt-2"). For a plain ByteLevel
pre-tokenizer this script first checks that it is GPT-2's (regex on, no prefix space). Token-id
prompts make the vocabulary's text side irrelevant to the benchmark; only the ids must agree.

usage: convert_q8.py LLAMA_CPP_SRC MODEL_DIR OUT.gguf [OUTTYPE]   (OUTTYPE: q8_0, f16, f32)
"""
import json
import os
import runpy
import sys

src, model, out = sys.argv[1:4]
outtype = sys.argv[4] if len(sys.argv) > 4 else "q8_0"
with open(os.path.join(model, "tokenizer.json")) as f:
    pre = json.load(f)["pre_tokenizer"]
# tokenizers' ByteLevel with its regex on is GPT-2's split exactly; the other files this script
# is given (transformers 5's re-save of GPT-2's, a Sequence with a Split) it passes as before
if pre["type"] == "ByteLevel" and (pre.get("add_prefix_space") or not pre.get("use_regex")):
    sys.exit(f"{model}: pre-tokenizer {pre} is not GPT-2's byte-level split")
sys.path.insert(0, src)
sys.argv = ["convert_hf_to_gguf.py", model, "--outtype", outtype, "--outfile", out]
import conversion.base as base  # noqa: E402

base.TextModel.get_vocab_base_pre = lambda self, tokenizer: "gpt-2"
runpy.run_path(src + "/convert_hf_to_gguf.py", run_name="__main__")
