"""Tiny Llama-family checkpoints written by transformers itself, and what transformers computes.

Run from this directory with the transformers of the local pip index (5.18.0; torch 2.13 CPU):

    pip install --index-url file:///opt/pypi/simple --extra-index-url file:///opt/pypi-more/simple \
        --find-links /opt/wheels torch transformers tokenizers
    python make_fixtures.py

Writes, per case NAME (a folder):
  config.json, generation_config.json, model.safetensors   LlamaForCausalLM & co.'s save_pretrained
  tokenizer.json, tokenizer_config.json, chat_template.jinja   the tokenizer's save_pretrained
  expected.json   transformers' own outputs on those files (from_pretrained in float32, eager
                  attention): token ids of fixed texts, greedy tokens with the top-5 logprobs of
                  every step, and chat-template token counts (strftime_now pinned to 2026-11-24).
Cases named *-v4 hold the same weights with config.json in the transformers 4 form (top-level
rope_theta / rope_scaling, torch_dtype, tokenizer_class PreTrainedTokenizerFast, the chat template
inside tokenizer_config.json). transformers 4 itself cannot be installed here (the local index
has no huggingface-hub < 1.0, which 4.57 needs), so the script rewrites the keys as 4.x wrote them
and transformers 5 reads the rewritten files back through its backward-compatible path: the
expected outputs of a -v4 case are computed from its own files.

Also writes:
  rope.json   for each rope configuration, transformers' ROPE_INIT_FUNCTIONS inv_freq and
              attention factor (the functions the models call), at real models' sizes.
  keys.json   for each supported model_type, the keys its transformers config class writes
              (to_dict of a default instance), and PreTrainedConfig's own keys.
The weights are random (seeded); the tokenizers are the trained ones of ../hf-tokenizers (made by
its make_fixtures.py), the chat templates those of ../chat-templates and, for Phi-3.5, llama.cpp's copy of the official one
(templates/phi3_5.jinja, from llama.cpp's models/templates/microsoft-Phi-3.5-mini-instruct.jinja).
"""
import datetime as _dt
import importlib
import json
import math
import os
import shutil

import torch
import transformers
import transformers.utils.chat_template_utils as ctu
from tokenizers import Tokenizer
from transformers import (AutoModelForCausalLM, AutoTokenizer, GenerationConfig,
                          PreTrainedTokenizerFast)

class _Pinned(_dt.datetime):
    """strftime_now (Llama 3.1+ templates print today's date) pinned, as ../chat-templates does."""

    @classmethod
    def now(cls, tz=None):
        return cls(2026, 11, 24, 12, 0, 0)


ctu.datetime = _Pinned

HERE = os.path.dirname(os.path.abspath(__file__))
TOKENIZERS = os.path.join(HERE, "..", "hf-tokenizers")
TEMPLATES = os.path.join(HERE, "..", "chat-templates")
STEPS = 10

TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "def add(a, b):\n    return a + b\n",
    "whitespace    runs\t\ttabs\n\n\nand newlines \n ",
    "digits 1234567890 and 3.14159",
    "東京は日本の首都です。机器学习 🙂🚀",
    "It's they're WE'VE I'm you'll",
]
PROMPTS = [
    "The quick brown fox jumps over the lazy dog. Tokenizers split text",
    "def forward(self, x):\n    return self.linear(x) + 1",
]
CONVERSATIONS = [
    [{"role": "user", "content": "Hello there, how are you?"}],
    [{"role": "system", "content": "You are terse."},
     {"role": "user", "content": "Name a colour."},
     {"role": "assistant", "content": "Blue."},
     {"role": "user", "content": "Another one, please."}],
]

# tokenizer name -> (tokenizer fixture, chat template, bos, eos); a model_type's own by default
TOKENIZER = {
    "llama": ("llama3", "llama3_2", "<|begin_of_text|>", "<|eot_id|>"),
    "qwen2": ("qwen2", "qwen2_5", None, "<|im_end|>"),
    "qwen3": ("qwen2", "qwen3", None, "<|im_end|>"),
    "mistral": ("sentencepiece", "mistral", "<s>", "</s>"),
    # Phi-3/3.5: Llama 2's SentencePiece vocabulary plus the chat markers; Phi-4-mini: a
    # byte-level BPE (o200k-like) with the same markers
    "phi3": ("sentencepiece", "phi3_5", "<s>", "<|end|>"),
    "phi4": ("llama3", "phi3_5", None, "<|end|>"),
}
PHI_SPECIALS = ["<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
TOKENIZER_OF = {"phi4-mini-partial": "phi4"}

SHAPE = dict(hidden_size=48, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-5)

# name -> (model_type, extra config keys (transformers 5 form), tie)
CASES = {
    "llama-llama3": ("llama", dict(rope_parameters=dict(
        rope_type="llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0,
        high_freq_factor=4.0, original_max_position_embeddings=16)), True),
    "llama-linear": ("llama", dict(rope_parameters=dict(
        rope_type="linear", rope_theta=10000.0, factor=2.0)), True),
    "llama-dynamic": ("llama", dict(rope_parameters=dict(
        rope_type="dynamic", rope_theta=10000.0, factor=4.0)), True),
    "llama-yarn": ("llama", dict(rope_parameters=dict(
        rope_type="yarn", rope_theta=10000.0, factor=4.0, original_max_position_embeddings=16,
        mscale=0.707, mscale_all_dim=1.0, beta_fast=32.0, beta_slow=1.0)), True),
    "llama-longrope": ("llama", dict(rope_parameters=dict(
        rope_type="longrope", rope_theta=10000.0, original_max_position_embeddings=32,
        short_factor=[1.0 + 0.05 * i for i in range(6)],
        long_factor=[1.0 + 0.5 * i for i in range(6)])), True),
    "llama-bias": ("llama", dict(attention_bias=True, mlp_bias=True, rope_parameters=dict(
        rope_type="default", rope_theta=10000.0)), False),
    "qwen2": ("qwen2", dict(rope_parameters=dict(rope_type="default", rope_theta=1000000.0)),
              False),
    "qwen3-yarn": ("qwen3", dict(head_dim=16, rope_parameters=dict(
        rope_type="yarn", rope_theta=1000000.0, factor=4.0,
        original_max_position_embeddings=16)), True),
    "mistral": ("mistral", dict(sliding_window=None, head_dim=12, rope_parameters=dict(
        rope_type="default", rope_theta=1000000.0)), False),
    # sliding windows shorter than the prompts: every layer (Mistral v0.1), the layers from
    # max_window_layers on (Qwen2), the layers layer_types names (Qwen3)
    "mistral-window": ("mistral", dict(sliding_window=8, rope_parameters=dict(
        rope_type="default", rope_theta=10000.0)), False),
    "qwen2-window": ("qwen2", dict(use_sliding_window=True, sliding_window=6, max_window_layers=1,
                                   rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
                     True),
    "qwen3-window": ("qwen3", dict(head_dim=16, use_sliding_window=True, sliding_window=5,
                                   layer_types=["sliding_attention", "full_attention"],
                                   rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
                     False),
    # Phi-3.5-mini: longrope (served within original_max_position_embeddings), fused qkv_proj
    # and gate_up_proj; Phi-3-mini-4k: a sliding window over every layer; Phi-4-mini: longrope
    # over 3/4 of each head, tied
    "phi3-longrope": ("phi3", dict(original_max_position_embeddings=32, rope_parameters=dict(
        rope_type="longrope", rope_theta=10000.0, short_factor=[1.0 + 0.05 * i for i in range(6)],
        long_factor=[1.0 + 0.9 * i for i in range(6)])), False),
    "phi3-window": ("phi3", dict(sliding_window=7, rope_parameters=dict(
        rope_type="default", rope_theta=10000.0)), False),
    "phi4-mini-partial": ("phi3", dict(hidden_size=64, original_max_position_embeddings=32,
        rope_parameters=dict(rope_type="longrope", rope_theta=10000.0, partial_rotary_factor=0.75,
        short_factor=[1.0 + 0.03 * i for i in range(6)],
        long_factor=[1.0 + 0.7 * i for i in range(6)])), True),
    # Phi-3-mini-128k's case: longrope past original_max_position_embeddings. transformers'
    # generate() computes a prompt longer than 12 with the long factors throughout, and any
    # token at position 12 or later with them: the expected outputs come from its KV-cache path
    "phi3-longrope-long": ("phi3", dict(original_max_position_embeddings=12, rope_parameters=dict(
        rope_type="longrope", rope_theta=10000.0, short_factor=[1.0 + 0.1 * i for i in range(6)],
        long_factor=[1.5 + 2.5 * i for i in range(6)])), False),
}
# cases whose expected outputs follow generate()'s KV-cache path (each step computes only its
# new token, so the rope each token got depends on the length when it was computed), and their
# prompts: one shorter than the original length that decodes past it, one longer
CACHED = {"phi3-longrope-long": [
    "Hello world",
    "The quick brown fox jumps over the lazy dog. Tokenizers split text into pieces.",
]}
# cases also written in the transformers 4 form, with the tokenizer class the families' hub
# checkpoints name (transformers 5 rebuilds a named class's pipeline from the file's vocab)
V4 = {"llama-llama3": "PreTrainedTokenizerFast", "qwen2": "Qwen2TokenizerFast",
      "qwen3-yarn": "Qwen2Tokenizer", "mistral": "LlamaTokenizerFast",
      "qwen2-window": "Qwen2TokenizerFast", "phi3-longrope": "LlamaTokenizer",
      "phi3-window": "LlamaTokenizerFast"}


def tokenizer_for(key):
    name, template, bos, eos = TOKENIZER[key]
    backend = Tokenizer.from_file(os.path.join(TOKENIZERS, name, "tokenizer.json"))
    if key.startswith("phi"):
        backend.add_special_tokens(PHI_SPECIALS)
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=bos, eos_token=eos)
    local = os.path.join(HERE, "templates", template + ".jinja")  # llama.cpp's copy (Phi-3.5)
    with open(local if os.path.exists(local) else os.path.join(TEMPLATES, template + ".jinja")) as f:
        tok.chat_template = f.read()
    return tok


def randomize(model, seed):
    """Weights large enough that greedy choices are clear (std 0.02 gives near-uniform logits)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
            elif "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[1]) * 1.5)


def write_case(name, model_type, extra, tie, seed):
    out = os.path.join(HERE, name)
    shutil.rmtree(out, ignore_errors=True)
    key = TOKENIZER_OF.get(name, model_type)
    tok = tokenizer_for(key)
    config_class = transformers.CONFIG_MAPPING[model_type]
    eos = [tok.convert_tokens_to_ids(TOKENIZER[key][3])]
    config = config_class(vocab_size=len(tok), tie_word_embeddings=tie,
                          bos_token_id=tok.bos_token_id, eos_token_id=eos, pad_token_id=eos[0],
                          **{**SHAPE, **extra})
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    randomize(model, seed)
    model = model.to(torch.bfloat16)  # stored as the hubs store them
    model.generation_config = GenerationConfig(bos_token_id=tok.bos_token_id, eos_token_id=eos)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def to_v4(src, dst, tokenizer_class):
    """The same checkpoint with config.json and tokenizer_config.json as transformers 4.x wrote them."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("expected.json"))
    path = os.path.join(dst, "config.json")
    with open(path) as f:
        c = json.load(f)
    rope = c.pop("rope_parameters")
    c["rope_theta"] = rope.pop("rope_theta")
    if c["model_type"] == "phi3" and rope["rope_type"] == "longrope":
        rope["type"] = rope.pop("rope_type")  # Phi-3-mini-128k's config.json spelling
        rope.pop("original_max_position_embeddings", None)  # Phi-3 kept it at the top level
    c["rope_scaling"] = None if rope.get("rope_type") == "default" else rope
    c["torch_dtype"] = c.pop("dtype")
    c.pop("layer_types", None)  # the hubs' Qwen2.5 configs predate it: derived from max_window_layers
    c["transformers_version"] = "4.57.6"
    with open(path, "w") as f:
        json.dump(c, f, indent=2, sort_keys=True)
    tc_path = os.path.join(dst, "tokenizer_config.json")
    with open(tc_path) as f:
        tc = json.load(f)
    tc.pop("backend", None)
    tc["tokenizer_class"] = tokenizer_class
    with open(os.path.join(dst, "chat_template.jinja")) as f:
        tc["chat_template"] = f.read()
    os.remove(os.path.join(dst, "chat_template.jinja"))
    with open(tc_path, "w") as f:
        json.dump(tc, f, indent=2)


def expected(case_dir):
    tok = AutoTokenizer.from_pretrained(case_dir)
    model = AutoModelForCausalLM.from_pretrained(case_dir, dtype=torch.float32,
                                                 attn_implementation="eager")
    model.eval()
    texts = [{"text": t, "ids": tok.encode(t, add_special_tokens=True)} for t in TEXTS]
    runs = []
    cached = CACHED.get(os.path.basename(case_dir).removesuffix("-v4"))
    for prompt in cached or PROMPTS:
        ids = tok.encode(prompt, add_special_tokens=True)
        seq = list(ids)
        steps = []
        past = None
        with torch.no_grad():
            for _ in range(STEPS):
                if cached:
                    # generate()'s path: the prompt once, then one new token a step
                    out = model(torch.tensor([seq if past is None else seq[-1:]]),
                                past_key_values=past, use_cache=True)
                    past = out.past_key_values
                    logits = out.logits[0, -1].double()
                else:
                    # the whole sequence each step (no KV cache): the model's plain definition
                    logits = model(torch.tensor([seq])).logits[0, -1].double()
                logprobs = torch.log_softmax(logits, dim=-1)
                top = torch.topk(logprobs, 5)
                steps.append({"token": int(top.indices[0]),
                              "top_ids": [int(i) for i in top.indices],
                              "top_logprobs": [float(v) for v in top.values]})
                seq.append(int(top.indices[0]))
        runs.append({"prompt": prompt, "prompt_ids": ids, "steps": steps})
    chats = []
    for messages in CONVERSATIONS:
        try:
            rendered = tok.apply_chat_template(messages, tokenize=False,
                                               add_generation_prompt=True)
        except Exception as e:  # a template that refuses the conversation (Mistral: no system)
            chats.append({"messages": messages, "error": str(e).splitlines()[0]})
            continue
        ids = tok.encode(rendered, add_special_tokens=False)
        chats.append({"messages": messages, "token_count": len(ids), "ids": ids})
    with open(os.path.join(case_dir, "expected.json"), "w") as f:
        json.dump({"transformers": transformers.__version__, "texts": texts, "runs": runs,
                   "chats": chats}, f, indent=1)


ROPE = [
    # (name, model_type, config kwargs (transformers 5 form))
    ("llama3.1-8b", "llama", dict(hidden_size=4096, num_attention_heads=32,
        max_position_embeddings=131072, rope_parameters=dict(rope_type="llama3",
        rope_theta=500000.0, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
        original_max_position_embeddings=8192))),
    ("default-qwen2.5", "qwen2", dict(hidden_size=3584, num_attention_heads=28,
        max_position_embeddings=32768, rope_parameters=dict(rope_type="default",
        rope_theta=1000000.0))),
    ("linear", "llama", dict(hidden_size=2048, num_attention_heads=32,
        max_position_embeddings=8192, rope_parameters=dict(rope_type="linear",
        rope_theta=10000.0, factor=4.0))),
    ("dynamic", "llama", dict(hidden_size=2048, num_attention_heads=32,
        max_position_embeddings=4096, rope_parameters=dict(rope_type="dynamic",
        rope_theta=10000.0, factor=2.0))),
    ("yarn-qwen2.5-128k", "qwen2", dict(hidden_size=3584, num_attention_heads=28,
        max_position_embeddings=131072, rope_parameters=dict(rope_type="yarn",
        rope_theta=1000000.0, factor=4.0, original_max_position_embeddings=32768))),
    ("yarn-mscale", "llama", dict(hidden_size=2048, num_attention_heads=16,
        max_position_embeddings=163840, rope_parameters=dict(rope_type="yarn",
        rope_theta=10000.0, factor=40.0, original_max_position_embeddings=4096, mscale=0.707,
        mscale_all_dim=0.707, beta_fast=32, beta_slow=1))),
    ("yarn-no-truncate", "llama", dict(hidden_size=2048, num_attention_heads=16,
        max_position_embeddings=65536, rope_parameters=dict(rope_type="yarn",
        rope_theta=150000.0, factor=32.0, original_max_position_embeddings=4096,
        beta_fast=32.0, beta_slow=1.0, truncate=False))),
    ("yarn-attention-factor", "qwen3", dict(hidden_size=2048, num_attention_heads=16,
        head_dim=128, max_position_embeddings=131072, rope_parameters=dict(rope_type="yarn",
        rope_theta=1000000.0, factor=4.0, original_max_position_embeddings=32768,
        attention_factor=1.2))),
    ("longrope-phi3.5", "phi3", dict(hidden_size=3072, num_attention_heads=32,
        max_position_embeddings=131072, original_max_position_embeddings=4096,
        rope_parameters=dict(rope_type="longrope", rope_theta=10000.0,
        short_factor=[1.0 + 0.01 * i for i in range(48)],
        long_factor=[1.0 + 1.5 * i for i in range(48)]))),
    ("longrope-partial-phi4-mini", "phi3", dict(hidden_size=3072, num_attention_heads=24,
        max_position_embeddings=131072, original_max_position_embeddings=4096,
        rope_parameters=dict(rope_type="longrope", rope_theta=10000.0,
        partial_rotary_factor=0.75, short_factor=[1.0 + 0.02 * i for i in range(48)],
        long_factor=[1.0 + 1.1 * i for i in range(48)]))),
]


def rope_fixtures():
    cases = []
    for name, model_type, kw in ROPE:
        config = transformers.CONFIG_MAPPING[model_type](**kw)
        # the model's own rotary module: ROPE_INIT_FUNCTIONS for the scaled types, its
        # compute_default_rope_parameters for "default"
        module = importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
        rotary = next(getattr(module, n) for n in dir(module) if n.endswith("RotaryEmbedding"))
        r = rotary(config)
        inv, attention = r.inv_freq, r.attention_scaling
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        cases.append({"name": name, "model_type": model_type, "head_dim": head_dim,
                      "config": config.to_dict(),
                      "inv_freq": [float(v) for v in inv], "attention_factor": float(attention)})
    with open(os.path.join(HERE, "rope.json"), "w") as f:
        json.dump({"transformers": transformers.__version__, "cases": cases}, f, indent=1)


KEY_TYPES = ["llama", "qwen2", "qwen3", "mistral", "gemma2", "gemma3_text", "phi3", "gpt2"]


def key_fixture():
    base = sorted(transformers.PreTrainedConfig().to_dict().keys())
    types = {}
    for t in KEY_TYPES:
        types[t] = sorted(k for k in transformers.CONFIG_MAPPING[t]().to_dict().keys()
                          if k not in base)
    with open(os.path.join(HERE, "keys.json"), "w") as f:
        json.dump({"transformers": transformers.__version__, "PreTrainedConfig": base,
                   "model_types": types}, f, indent=1)


if __name__ == "__main__":
    for seed, (name, (model_type, extra, tie)) in enumerate(CASES.items()):
        d = write_case(name, model_type, extra, tie, 100 + seed)
        expected(d)
        if name in V4:
            to_v4(d, d + "-v4", V4[name])
            expected(d + "-v4")
        print("wrote", name)
    rope_fixtures()
    key_fixture()
