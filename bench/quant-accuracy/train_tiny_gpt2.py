#!/usr/bin/env python3
"""Trains a small GPT-2 on local English text, so that quantization is measured on weights with
a trained model's statistics (peaked next-token distributions, outlier channels) and not only on
random ones. Hugging Face's own code end to end: a byte-level BPE tokenizer trained with
`tokenizers`, `GPT2LMHeadModel` trained with torch, `save_pretrained` (safetensors).

Writes OUT/config.json, OUT/model.safetensors, OUT/tokenizer.json (radixserve serves the
directory as it is), OUT/heldout.txt (the last 5 % of the text, never trained on) and
OUT/train.json (what was trained, the loss curve and the held-out loss by torch).

usage: train_tiny_gpt2.py OUT [--minutes M] [--layers L] [--width E] [TEXT_FILE ...]
       (default text: Python's pydoc topics and, where present, Vim's help files)
"""
import argparse
import glob
import json
import math
import os
import time

import pydoc_data
import torch
from tokenizers import ByteLevelBPETokenizer
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

VOCAB = 8192
SEQ = 128
BATCH = 16


def default_texts():
    files = [os.path.join(os.path.dirname(pydoc_data.__file__), "topics.py")]
    return files + sorted(glob.glob("/usr/share/vim/vim*/doc/*.txt"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("texts", nargs="*")
    p.add_argument("--minutes", type=float, default=10)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=256, help="n_embd; heads of 64")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    files = a.texts or default_texts()
    text = "\n".join(open(f, encoding="utf-8", errors="replace").read() for f in files)
    cut = int(len(text) * 0.95)
    cut = text.index("\n", cut) + 1
    train_text, held = text[:cut], text[cut:]
    with open(os.path.join(a.out, "heldout.txt"), "w", encoding="utf-8") as f:
        f.write(held)

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([train_text], vocab_size=VOCAB, min_frequency=2,
                            special_tokens=["<|endoftext|>"])
    fast = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>",
                                   bos_token="<|endoftext|>", unk_token="<|endoftext|>")
    fast.save_pretrained(a.out)
    ids = torch.tensor(fast(train_text)["input_ids"], dtype=torch.long)
    held_ids = torch.tensor(fast(held)["input_ids"], dtype=torch.long)

    config = GPT2Config(vocab_size=len(fast), n_positions=512, n_embd=a.width, n_layer=a.layers,
                        n_head=a.width // 64,
                        bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id)
    model = GPT2LMHeadModel(config)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    deadline = time.time() + a.minutes * 60
    losses = []
    step = 0
    g = torch.Generator().manual_seed(0)
    model.train()
    while time.time() < deadline:
        lr = 1e-3 * min(1.0, (step + 1) / 100)
        for group in opt.param_groups:
            group["lr"] = lr
        starts = torch.randint(0, len(ids) - SEQ - 1, (BATCH,), generator=g)
        batch = torch.stack([ids[s:s + SEQ] for s in starts])
        loss = model(batch, labels=batch).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0:
            losses.append([step, round(loss.item(), 4)])
            print(f"step {step} loss {loss.item():.3f}", flush=True)
        step += 1

    model.eval()
    nll, n = 0.0, 0
    with torch.no_grad():
        for s in range(0, len(held_ids) - SEQ, SEQ):
            window = held_ids[s:s + SEQ].unsqueeze(0)
            nll += model(window, labels=window).loss.item() * (SEQ - 1)
            n += SEQ - 1
    model.save_pretrained(a.out, safe_serialization=True)
    info = {"files": files, "characters": len(text), "train_tokens": len(ids),
            "heldout_tokens": len(held_ids), "steps": step, "batch": BATCH, "seq": SEQ,
            "config": {"n_layer": a.layers, "n_head": a.width // 64, "n_embd": a.width,
                       "vocab": len(fast)},
            "heldout_loss": nll / max(n, 1), "heldout_ppl": math.exp(nll / max(n, 1)),
            "losses": losses}
    with open(os.path.join(a.out, "train.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps({k: v for k, v in info.items() if k not in ("losses", "files")}))


if __name__ == "__main__":
    main()
