#!/usr/bin/env python3
"""A Llama-3.1-8B-shaped random bf16 checkpoint (8.03 B parameters, 16 GB), written by streaming:
no copy of the whole model is ever in memory, so it can be written on the 24 GB machine the
8B footprint goal is measured on (issue 39).

- config.json and generation_config.json: transformers' LlamaConfig / GenerationConfig with
  Llama-3.1-8B's published values (its `llama3` RoPE scaling as transformers 5 writes it, in
  `rope_parameters`), written by their save_pretrained.
- The tensors: the names, shapes and order of transformers' own LlamaForCausalLM built on the
  meta device (so no memory), each drawn as transformers' _init_weights does (normal, std
  initializer_range = 0.02; RMSNorm weights 1.0), cast to bf16, and written one shard (~5 GB) at
  a time with safetensors' save_file, plus model.safetensors.index.json as save_pretrained
  writes it.
- The tokenizer: Llama 3's, from llama.cpp's vocabulary file (bench/gguf/llama3_tokenizer_files.py),
  so radixserve and llama.cpp's converter read the same one.

    python3 bench/memory/make_8b.py OUT [LLAMACPP_SRC]   (about 3 min; seed 0)

SHAPE=1b writes Llama-3.2-1B's shape instead (1.24 B parameters, tied 128k vocabulary, 2.5 GB):
the checkpoint the 1B memory and speed rows are measured on, written the same way (a tied
table once, as save_pretrained writes it).
"""
import json
import os
import subprocess
import sys

import torch
from safetensors.torch import save_file
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

SHARD_BYTES = 5 * 1000 ** 3


# Llama-3.1-8B's and Llama-3.2-1B's published shapes: what differs between them
SHAPES = {
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, head_dim=128,
               tie_word_embeddings=False, rope_factor=8.0),
    "1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, head_dim=64,
               tie_word_embeddings=True, rope_factor=32.0),
}


def config(shape="8b"):
    s = dict(SHAPES[shape])
    factor = s.pop("rope_factor")
    return LlamaConfig(
        vocab_size=128256, num_attention_heads=32, num_key_value_heads=8, hidden_act="silu",
        max_position_embeddings=131072, rms_norm_eps=1e-5,
        bos_token_id=128000, eos_token_id=[128001, 128008, 128009], initializer_range=0.02,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": factor,
                         "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192},
        dtype="bfloat16", architectures=["LlamaForCausalLM"], **s)


def main(out, src):
    os.makedirs(out, exist_ok=True)
    cfg = config(os.environ.get("SHAPE", "8b"))
    cfg.save_pretrained(out)
    GenerationConfig(bos_token_id=128000, eos_token_id=[128001, 128008, 128009]).save_pretrained(out)
    with torch.device("meta"):
        shapes = [(n, tuple(t.shape)) for n, t in LlamaForCausalLM(cfg).state_dict().items()]
    torch.manual_seed(0)
    shards, current, size = [], {}, 0
    for name, shape in shapes:
        if name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue  # the embedding is the head; save_pretrained writes it once
        nbytes = 2 * torch.Size(shape).numel()
        if current and size + nbytes > SHARD_BYTES:
            shards.append(current)
            flush(out, shards, current, len(shapes))
            current, size = {}, 0
        if name.endswith("norm.weight"):
            current[name] = torch.ones(shape, dtype=torch.bfloat16)
        else:
            current[name] = torch.empty(shape, dtype=torch.bfloat16).normal_(0.0, cfg.initializer_range)
        size += nbytes
    shards.append(current)
    flush(out, shards, current, len(shapes))
    index(out, shards)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "gguf",
                                                 "llama3_tokenizer_files.py"), src, out], check=True)


def flush(out, shards, tensors, _):
    # shards are renamed to -of-N once N is known (index())
    save_file(tensors, os.path.join(out, f"part-{len(shards):05d}.safetensors"), metadata={"format": "pt"})
    print(f"shard {len(shards)}: {len(tensors)} tensors", flush=True)
    for k in list(tensors):
        tensors[k] = tuple(tensors[k].shape)  # keep names and shapes only


def index(out, shards):
    n = len(shards)
    weight_map, total = {}, 0
    for i, tensors in enumerate(shards, 1):
        file = f"model-{i:05d}-of-{n:05d}.safetensors"
        os.replace(os.path.join(out, f"part-{i:05d}.safetensors"), os.path.join(out, file))
        for name, shape in tensors.items():
            weight_map[name] = file
            total += 2 * torch.Size(shape).numel()
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    print(f"{n} shards, {total / 1e9:.2f} GB, {total // 2:,} parameters")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "/work/llamacpp/src")
