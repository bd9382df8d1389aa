#!/usr/bin/env python3
"""Embeds the small Llama that copies (train_copy_llama.py: 2 layers, width 128, 4 heads of 32,
vocabulary 1,024) into the Llama-3.2-1B shape (16 layers, width 2,048, 32 query and 8 kv heads of
64, MLP 8,192, vocabulary 128,256, tied head), so that speculative decoding is measured where a
decode step costs what a 1B step costs (reading 1.24 B weights) and the drafts are accepted as
often as a model that really copies accepts them. A 1B-shaped model that copies cannot be
trained on this machine; this one computes exactly the small model's function:

- hidden dims 0..127 carry the small model's residual stream; the rest stay 0;
- layers 0-1 are the small model's, layers 2-15 have every projection 0, so they add nothing;
- small head h is query head 4h and kv head h (query heads of one kv group share it); a head's
  32 dims sit at dims 2i and 2i+32 of the 64, where RoPE over 64 dims turns them at the small
  model's frequencies (theta^(-4i/64) = theta^(-2i/32)); q is scaled by sqrt(2) so that the
  1/sqrt(64) softmax scale equals the small model's 1/sqrt(32);
- RMSNorm over 2,048 dims of which 128 are non-zero: weights / 4 and eps / 16 give the same
  values exactly;
- the 127,232 extra vocabulary rows are the mean of the 1,024 real ones, so their logit is the
  mean of the real logits: never the greedy pick (the workloads are greedy), and the real
  logits are the small model's.

Dense kernels read the zeros as they read any weight, so the step costs a 1B step at any
--quantization. RoPE theta stays the small model's 10,000 (the 1B checkpoint's 500,000 does not
change the cost).

Checks with transformers (its own LlamaForCausalLM on both configs): the padded model in fp32
gives the small model's logits over the first 1,024 tokens (max |diff| printed, must be < 1e-3),
and the written bf16 files, loaded back with from_pretrained, agree with the small model's
argmax on the check sequences (printed).

usage: embed_copy_1b.py SMALL_DIR OUT_DIR [--dtype bfloat16|float32]
"""
import argparse
import json
import math
import os
import random
import shutil

import torch
from safetensors.torch import load_file, save_file
from transformers import LlamaConfig, LlamaForCausalLM

BIG = dict(hidden_size=2048, intermediate_size=8192, num_attention_heads=32,
           num_key_value_heads=8, head_dim=64, num_hidden_layers=16, vocab_size=128256)


def head_dim_map(small_hd, big_hd):
    """Small head dim j -> big head dim, keeping RoPE's (i, i + d/2) pairs and frequencies."""
    half = small_hd // 2
    ratio = big_hd // small_hd
    return [ratio * j if j < half else ratio * (j - half) + big_hd // 2 for j in range(small_hd)]


def embed(small, sc):
    h, hd, nh = sc["hidden_size"], sc["head_dim"], sc["num_attention_heads"]
    nkv = sc["num_key_value_heads"]
    inter, vocab = sc["intermediate_size"], sc["vocab_size"]
    bh, bhd, bnh, bnkv = BIG["hidden_size"], BIG["head_dim"], BIG["num_attention_heads"], \
        BIG["num_key_value_heads"]
    group = bnh // bnkv
    assert nh == nkv <= bnkv and hd * 2 == bhd, "the mapping assumes MHA with head_dim 32"
    dmap = head_dim_map(hd, bhd)
    norm_scale = math.sqrt(h / bh)
    q_scale = math.sqrt(bhd / hd)
    out = {}
    emb = torch.zeros(BIG["vocab_size"], bh)
    emb[:vocab, :h] = small["model.embed_tokens.weight"]
    emb[vocab:, :h] = small["model.embed_tokens.weight"].mean(0)
    out["model.embed_tokens.weight"] = emb
    fnorm = torch.ones(bh)
    fnorm[:h] = small["model.norm.weight"] * norm_scale
    out["model.norm.weight"] = fnorm
    for layer in range(BIG["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        q = torch.zeros(bnh * bhd, bh)
        k = torch.zeros(bnkv * bhd, bh)
        v = torch.zeros(bnkv * bhd, bh)
        o = torch.zeros(bh, bnh * bhd)
        gate = torch.zeros(BIG["intermediate_size"], bh)
        up = torch.zeros(BIG["intermediate_size"], bh)
        down = torch.zeros(bh, BIG["intermediate_size"])
        in_norm = torch.ones(bh)
        post_norm = torch.ones(bh)
        if layer < sc["num_hidden_layers"]:
            sq = small[p + "self_attn.q_proj.weight"]
            sk = small[p + "self_attn.k_proj.weight"]
            sv = small[p + "self_attn.v_proj.weight"]
            so = small[p + "self_attn.o_proj.weight"]
            for head in range(nh):
                qh, kvh = group * head, head
                for j in range(hd):
                    q[qh * bhd + dmap[j], :h] = sq[head * hd + j] * q_scale
                    k[kvh * bhd + dmap[j], :h] = sk[head * hd + j]
                    v[kvh * bhd + j, :h] = sv[head * hd + j]
                    o[:h, qh * bhd + j] = so[:, head * hd + j]
            gate[:inter, :h] = small[p + "mlp.gate_proj.weight"]
            up[:inter, :h] = small[p + "mlp.up_proj.weight"]
            down[:h, :inter] = small[p + "mlp.down_proj.weight"]
            in_norm[:h] = small[p + "input_layernorm.weight"] * norm_scale
            post_norm[:h] = small[p + "post_attention_layernorm.weight"] * norm_scale
        out[p + "self_attn.q_proj.weight"] = q
        out[p + "self_attn.k_proj.weight"] = k
        out[p + "self_attn.v_proj.weight"] = v
        out[p + "self_attn.o_proj.weight"] = o
        out[p + "mlp.gate_proj.weight"] = gate
        out[p + "mlp.up_proj.weight"] = up
        out[p + "mlp.down_proj.weight"] = down
        out[p + "input_layernorm.weight"] = in_norm
        out[p + "post_attention_layernorm.weight"] = post_norm
    return out


def big_config(sc):
    cfg = dict(sc)
    cfg.update(BIG)
    cfg["rms_norm_eps"] = sc["rms_norm_eps"] * sc["hidden_size"] / BIG["hidden_size"]
    cfg["max_position_embeddings"] = max(sc.get("max_position_embeddings", 2048), 8192)
    return cfg


def check_sequences(vocab, n=4, length=200):
    rng = random.Random(7)
    seqs = []
    for _ in range(n):
        # a random span repeated: the copying the model learned, so the argmax is meaningful
        span = [rng.randrange(1, vocab) for _ in range(length // 2)]
        seqs.append(span + span)
    return torch.tensor(seqs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("small")
    ap.add_argument("out")
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    args = ap.parse_args()
    torch.manual_seed(0)
    with open(os.path.join(args.small, "config.json")) as f:
        sc = json.load(f)
    small_model = LlamaForCausalLM.from_pretrained(args.small, dtype=torch.float32).eval()
    small = load_file(os.path.join(args.small, "model.safetensors"))
    big = embed(small, sc)
    cfg = big_config(sc)
    ids = check_sequences(sc["vocab_size"])
    with torch.no_grad():
        ref = small_model(ids).logits
        model = LlamaForCausalLM(LlamaConfig(**{k: v for k, v in cfg.items()
                                                if k not in ("architectures", "transformers_version")}))
        # assign: the model's parameters are big's tensors, not a second 5 GB copy
        missing, unexpected = model.load_state_dict(big, strict=False, assign=True)
        assert not unexpected and all(m == "lm_head.weight" for m in missing), (missing, unexpected)
        model.tie_weights()
        got = model.eval()(ids).logits
    diff = (got[..., :sc["vocab_size"]] - ref).abs().max().item()
    same_top1 = (got.argmax(-1) == ref.argmax(-1)).float().mean().item()
    print(f"fp32 padded vs small: max |logit diff| over the real vocabulary {diff:.2e}, "
          f"argmax agreement {same_top1:.4f} ({ids.numel()} positions)")
    assert diff < 1e-3 and same_top1 == 1.0, "the padded model is not the small model"
    del model
    n_params = sum(t.numel() for t in big.values())
    os.makedirs(args.out, exist_ok=True)
    dtype = getattr(torch, args.dtype)
    save_file({k: v.to(dtype).contiguous() for k, v in big.items()},
              os.path.join(args.out, "model.safetensors"), metadata={"format": "pt"})
    cfg["dtype"] = args.dtype
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        if os.path.exists(os.path.join(args.small, name)):
            shutil.copy(os.path.join(args.small, name), os.path.join(args.out, name))
    del big
    with torch.no_grad():
        back = LlamaForCausalLM.from_pretrained(args.out, dtype=torch.float32).eval()(ids).logits
    agree = (back.argmax(-1) == ref.argmax(-1)).float().mean().item()
    print(f"{args.dtype} files loaded back: argmax agreement with the small model {agree:.4f}, "
          f"max |logit diff| {(back[..., :sc['vocab_size']] - ref).abs().max().item():.2e}")
    print(f"wrote {args.out}: {n_params:,} parameters")


if __name__ == "__main__":
    main()
