#!/usr/bin/env python3
"""Runs llama.cpp's convert_hf_to_gguf.py on a checkpoint whose tokenizer files are GPT-2's
(bench/llamacpp/gpt2_tokenizer_files.py, saved as a fast tokenizer): transformers 5 writes
them with a pre-tokenizer hash the converter's table does not list, so its check is told the
answer ("gpt-2"), which is what the files are. Token-id prompts make the vocabulary's text side
irrelevant to the benchmark; only the ids must agree, and they are r50k_base's in both servers.

usage: convert_q8.py LLAMA_CPP_SRC MODEL_DIR OUT.gguf
"""
import sys

src, model, out = sys.argv[1:4]
sys.path.insert(0, src)
sys.argv = ["convert_hf_to_gguf.py", model, "--outtype", "q8_0", "--outfile", out]
import conversion.base as base  # noqa: E402

base.TextModel.get_vocab_base_pre = lambda self, tokenizer: "gpt-2"
import runpy  # noqa: E402

runpy.run_path(src + "/convert_hf_to_gguf.py", run_name="__main__")
