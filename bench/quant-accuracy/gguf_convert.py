"""llama.cpp's convert_hf_to_gguf.py for a directory train_tiny_gpt2.py wrote.

Two things stop the converter as it is: config.json has no `n_ctx` (transformers 5 writes only
`n_positions`, which the GPT-2 converter does not read), and the tokenizer is one the converter's
table of pre-tokenizer hashes does not list. Its pre-tokenizer is GPT-2's own (a byte-level BPE
with GPT-2's split regex), so it is converted as "gpt-2".

usage: python gguf_convert.py LLAMA_CPP_SRC SRC_DIR -- CONVERTER_ARGS...
  SRC_DIR: the model directory's files linked beside a config.json that has n_ctx
"""
import runpy
import sys

src = sys.argv[1]
sys.path.insert(0, src)
import conversion.base as base  # noqa: E402  (llama.cpp's own package, from its tree)

base.TextModel.get_vocab_base_pre = lambda self, tokenizer: "gpt-2"
sys.argv = ["convert_hf_to_gguf.py"] + sys.argv[sys.argv.index("--") + 1:]
runpy.run_path(f"{src}/convert_hf_to_gguf.py", run_name="__main__")
