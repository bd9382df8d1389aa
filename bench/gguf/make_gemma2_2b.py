"""A Gemma-2-2B-shaped GGUF file for serving benchmarks, made by llama.cpp's own tools.

    make_gemma2_2b.py WORK [LLAMACPP_SRC]     (python with torch, transformers, sentencepiece:
                                               bench/llamacpp/build.sh's venv)

transformers writes a Gemma2ForCausalLM with google/gemma-2-2b's config.json numbers (26 layers,
hidden 2304, 8 heads of 256, 4 kv heads, MLP 9216, vocab 256,000, window 4096 on every other
layer, soft-caps 50 / 30) and random weights (transformers' own init) to WORK/gemma2-2b, in
bfloat16, with the tiny Gemma-style SentencePiece tokenizer.model of the GGUF fixtures
(model-runtime/src/test/resources/gguf/make_fixtures.py's train_gemma_spm; the converter pads the
vocabulary to the config's 256,000 with unused tokens, so the embedding and the tied head keep
Gemma 2's 256k rows). llama.cpp's convert_hf_to_gguf.py writes WORK/gemma2-2b-q8_0.gguf and an
F16 file, which llama-quantize turns into WORK/gemma2-2b-q4_0.gguf (the F16 file is removed).
Random weights: for speed, memory and start-up, not for what the model says.
"""
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "model-runtime", "src", "test", "resources", "gguf")

work = sys.argv[1]
llamacpp = sys.argv[2] if len(sys.argv) > 2 else "/work/llamacpp/src"
os.environ["LLAMACPP_SRC"] = llamacpp
spec = importlib.util.spec_from_file_location("gguf_fixtures",
                                              os.path.join(FIXTURES, "make_fixtures.py"))
fx = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fx)

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer, Gemma2Config  # noqa: E402

out = os.path.join(work, "gemma2-2b")
if not os.path.exists(os.path.join(out, "model.safetensors.index.json")):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tokenizer.model"), "wb") as f:
        f.write(fx.train_gemma_spm())
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        # the special tokens as the hub's tokenizer_config.json lists them, which the converter
        # types CONTROL (train_gemma_spm puts them at ids 0-6)
        specials = ["<pad>", "<eos>", "<bos>", "<unk>"] + fx.GEMMA_SPECIALS
        json.dump({"tokenizer_class": "GemmaTokenizer", "add_bos_token": True,
                   "bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>",
                   "unk_token": "<unk>", "added_tokens_decoder": {
                       str(i): {"content": t, "lstrip": False, "normalized": False,
                                "rstrip": False, "single_word": False, "special": True}
                       for i, t in enumerate(specials)}}, f)
    tok = AutoTokenizer.from_pretrained(out)
    config = Gemma2Config(vocab_size=256000, hidden_size=2304, intermediate_size=9216,
                          num_hidden_layers=26, num_attention_heads=8, num_key_value_heads=4,
                          head_dim=256, query_pre_attn_scalar=256, sliding_window=4096,
                          attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
                          max_position_embeddings=8192, rms_norm_eps=1e-6,
                          tie_word_embeddings=True, bos_token_id=2, eos_token_id=[1, 6],
                          pad_token_id=0)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(out)
    tok.save_pretrained(out)
for outtype in ("q8_0", "f16"):
    path = os.path.join(work, f"gemma2-2b-{outtype}.gguf")
    if not os.path.exists(path):
        fx.convert(out, path, outtype, "default")
q4 = os.path.join(work, "gemma2-2b-q4_0.gguf")
if not os.path.exists(q4):
    subprocess.run([os.path.join(llamacpp, "build", "bin", "llama-quantize"),
                    os.path.join(work, "gemma2-2b-f16.gguf"), q4, "Q4_0", "2"], check=True)
if os.path.exists(os.path.join(work, "gemma2-2b-f16.gguf")):
    os.remove(os.path.join(work, "gemma2-2b-f16.gguf"))
print("wrote", os.path.join(work, "gemma2-2b-q8_0.gguf"), q4)
