"""Writes the Gemma 2 / Gemma 3 (text) checkpoint fixtures and transformers' outputs for them.

Each model is tiny and random, built and saved by transformers itself (save_pretrained, float32),
with a SentencePiece-style BPE tokenizer trained here by `tokenizers` and assembled as Gemma's
hub files are (no dummy prefix, spaces as ▁, <0xNN> byte fallback, <bos> added,
<start_of_turn>/<end_of_turn> specials). Run from this directory (python 3.11; torch 2.13 cpu,
transformers 5.18, tokenizers 0.23):

    pip install --index-url file:///opt/pypi/simple torch transformers tokenizers jinja2
    python make_fixtures.py

Writes, per model NAME (gemma2, gemma3):
  NAME/config.json, NAME/model.safetensors, NAME/generation_config.json   (save_pretrained)
  NAME/tokenizer.json, NAME/tokenizer_config.json (chat_template: the model's official one)
  NAME/expected.json: the prompt's ids; for 12 greedy steps (full recomputation, eager attention,
      float32) the chosen token, its top-5 ids and log-probabilities and the top-2 gap; and per
      conversation the ids of apply_chat_template(add_generation_prompt=True)
and gemma3/config.transformers4.json: gemma3's config as transformers 4 wrote it (rope_theta,
rope_local_base_freq, rope_scaling, sliding_window_pattern, torch_dtype), checked here to load
into the very same config.
"""
import json
import math
import os

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (AutoConfig, AutoModelForCausalLM, AutoTokenizer, Gemma2Config,
                          Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3TextConfig)

HERE = os.path.dirname(os.path.abspath(__file__))

TRAIN = """The quick brown fox jumps over the lazy dog. Sliding windows keep only the recent keys.
Gemma models soft-cap their logits with tanh, and norm every sublayer twice.
def forward(self, x):\n    return self.linear(x) + 1  # residual
Numbers like 12345 and 2026 appear; Les élèves étudient à l'école.
Every block of the pool holds sixteen tokens; the radix tree shares prefixes between requests.
""" * 3

SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>"]

# Gemma 2's template: google/gemma-2-2b-it's tokenizer_config.json (llama.cpp's copy,
# models/templates/google-gemma-2-2b-it.jinja).
GEMMA2_TEMPLATE = open(os.path.join(HERE, "gemma2.jinja"), encoding="utf-8").read()
# Gemma 3's template: google/gemma-3-1b-it's tokenizer_config.json chat_template.
GEMMA3_TEMPLATE = open(os.path.join(HERE, "gemma3.jinja"), encoding="utf-8").read()

PROMPT = ("The radix tree shares prefixes between requests, and sliding windows keep only"
          " the recent keys 🙂.")
STEPS = 12

CONVERSATIONS = {
    "gemma2": [
        [{"role": "user", "content": "Hello!"}],
        [{"role": "user", "content": "  Hi there "},
         {"role": "assistant", "content": "Bonjour !"},
         {"role": "user", "content": "Ünïcödé, 東京 and\n\nnewlines  "}],
    ],
    "gemma3": [
        [{"role": "user", "content": "Hello!"}],
        [{"role": "system", "content": "You are a terse assistant."},
         {"role": "user", "content": "What is 2 + 2?"}],
        [{"role": "user", "content": [{"type": "text", "text": " Parts, "}]},
         {"role": "assistant", "content": "Bonjour !"},
         {"role": "user", "content": "Ünïcödé, 東京 and\n\nnewlines  "}],
    ],
}


def tokenizer():
    """Gemma's tokenizer.json shape (as transformers 5's GemmaTokenizer builds it)."""
    trainer_tok = Tokenizer(models.BPE())
    trainer_tok.normalizer = normalizers.Replace(" ", "▁")
    trainer = trainers.BpeTrainer(vocab_size=150, special_tokens=[], show_progress=False,
                                  limit_alphabet=60)
    trainer_tok.train_from_iterator(TRAIN.splitlines(), trainer)
    trained = json.loads(trainer_tok.to_str())["model"]
    vocab = {s: i for i, s in enumerate(SPECIALS)}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for token, _ in sorted(trained["vocab"].items(), key=lambda kv: kv[1]):
        if token not in vocab:
            vocab[token] = len(vocab)
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in trained["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True,
                               fuse_unk=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous", invert=False)
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse()])
    tok.add_special_tokens(SPECIALS)
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos> $B:1", special_tokens=[("<bos>", 2)])
    return tok


def randomize(model, seed):
    """transformers' init (std 0.02, norms 0) makes every logit alike: spread them out."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name == "model.norm.weight":
                # a wide final norm spreads the (tied, small) head's logits
                p.copy_(3.0 + torch.randn(p.shape, generator=g) * 0.3)
            elif "norm" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.3)
            elif "embed" in name:
                # small beside the sublayers' outputs, so the residual is not its own token
                p.copy_(torch.randn(p.shape, generator=g) * 0.12)
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 1.5 / math.sqrt(p.shape[-1]))


def write_model(name, config, cls, seed, template):
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    tok = tokenizer()
    config.vocab_size = tok.get_vocab_size()
    torch.manual_seed(seed)
    model = cls(config).eval()
    randomize(model, seed)
    model.save_pretrained(out)
    tok.save(os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"tokenizer_class": "GemmaTokenizer", "add_bos_token": True,
                   "add_eos_token": False, "bos_token": "<bos>", "eos_token": "<eos>",
                   "pad_token": "<pad>", "unk_token": "<unk>", "mask_token": "<mask>",
                   "chat_template": template}, f, ensure_ascii=False, indent=1)

    hf_tok = AutoTokenizer.from_pretrained(out)
    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    ids = hf_tok(PROMPT).input_ids
    assert ids == tok.encode(PROMPT).ids, "transformers and tokenizers disagree on the prompt"
    assert len(ids) > 2 * config.sliding_window, (len(ids), config.sliding_window)
    steps = []
    seq = list(ids)
    with torch.no_grad():
        for _ in range(STEPS):
            logits = model(torch.tensor([seq])).logits[0, -1].double()
            logprobs = torch.log_softmax(logits, -1)
            top = torch.topk(logprobs, 5)
            token = int(top.indices[0])
            steps.append({"token": token, "top_ids": top.indices.tolist(),
                          "top_logprobs": top.values.tolist(),
                          "top2_gap": float(top.values[0] - top.values[1])})
            seq.append(token)
    chats = []
    for conv in CONVERSATIONS[name]:
        text = hf_tok.apply_chat_template(conv, add_generation_prompt=True, tokenize=False)
        chat_ids = hf_tok.apply_chat_template(conv, add_generation_prompt=True, tokenize=True,
                                              return_dict=True)["input_ids"]
        assert chat_ids == hf_tok(text, add_special_tokens=False).input_ids
        chats.append({"messages": conv, "text": text, "ids": chat_ids})
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"prompt": PROMPT, "prompt_ids": ids, "steps": steps, "chats": chats}, f,
                  ensure_ascii=False, indent=1)
    print(name, "prompt", len(ids), "tokens; greedy", [s["token"] for s in steps],
          "min top-2 gap %.4f" % min(s["top2_gap"] for s in steps))
    return out


def common():
    return dict(hidden_size=64, intermediate_size=64, num_attention_heads=4,
                num_key_value_heads=2, head_dim=16, max_position_embeddings=128,
                rms_norm_eps=1e-6, sliding_window=8, bos_token_id=2, eos_token_id=1,
                pad_token_id=0, tie_word_embeddings=True)


def matters(name, **overrides):
    """How far the last prompt position's log-probabilities move when the config says otherwise:
    each feature the fixtures exist to test must move them well past the tests' 1e-4."""
    out = os.path.join(HERE, name)
    with open(os.path.join(out, "expected.json"), encoding="utf-8") as f:
        ids = json.load(f)["prompt_ids"]
    logprobs = []
    for o in [{}, overrides]:
        config = AutoConfig.from_pretrained(out, **o)
        model = AutoModelForCausalLM.from_pretrained(out, config=config, dtype=torch.float32,
                                                     attn_implementation="eager").eval()
        with torch.no_grad():
            logprobs.append(torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].double(), -1))
    delta = float((logprobs[0] - logprobs[1]).abs().max())
    print(name, overrides, "moves log-probabilities by %.3f" % delta)
    assert delta > 1e-2, (name, overrides, delta)


def main():
    gemma2 = Gemma2Config(num_hidden_layers=2, query_pre_attn_scalar=24,
                          attn_logit_softcapping=3.0, final_logit_softcapping=10.0,
                          rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, **common())
    assert gemma2.layer_types == ["sliding_attention", "full_attention"]
    write_model("gemma2", gemma2, Gemma2ForCausalLM, 7, GEMMA2_TEMPLATE)

    gemma3 = Gemma3TextConfig(
        num_hidden_layers=3, query_pre_attn_scalar=32,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"],
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                         "full_attention": {"rope_type": "linear", "factor": 2.0,
                                            "rope_theta": 1000000.0}},
        **common())
    out = write_model("gemma3", gemma3, Gemma3ForCausalLM, 11, GEMMA3_TEMPLATE)

    # transformers 4's form of the same config
    with open(os.path.join(out, "config.json"), encoding="utf-8") as f:
        tf4 = json.load(f)
    rope = tf4.pop("rope_parameters")
    tf4.pop("layer_types")
    tf4["torch_dtype"] = tf4.pop("dtype")
    tf4["rope_theta"] = rope["full_attention"]["rope_theta"]
    tf4["rope_local_base_freq"] = rope["sliding_attention"]["rope_theta"]
    tf4["rope_scaling"] = {"rope_type": "linear", "factor": rope["full_attention"]["factor"]}
    tf4["sliding_window_pattern"] = 3
    tf4["transformers_version"] = "4.50.0"
    tf4.pop("_sliding_window_pattern")  # transformers 5 leaks its private copy of the pattern
    with open(os.path.join(out, "config.transformers4.json"), "w", encoding="utf-8") as f:
        json.dump(tf4, f, indent=2)
    again = Gemma3TextConfig.from_dict(tf4)
    assert again.layer_types == gemma3.layer_types, again.layer_types
    assert again.rope_parameters == AutoConfig.from_pretrained(out).rope_parameters, \
        (again.rope_parameters, AutoConfig.from_pretrained(out).rope_parameters)

    matters("gemma2", attn_logit_softcapping=None)
    matters("gemma2", final_logit_softcapping=None)
    matters("gemma2", sliding_window=128)
    matters("gemma2", query_pre_attn_scalar=16)
    matters("gemma3", sliding_window=128)
    matters("gemma3", rope_parameters={
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}})
    matters("gemma3", rope_parameters={
        "sliding_attention": {"rope_type": "default", "rope_theta": 1000000.0},
        "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1000000.0}})


if __name__ == "__main__":
    main()
